"""The languages chunked with tree-sitter: one row per language, the node types that matter.

A row says which grammar wheel parses the language and how its syntax tree shows
definitions. The chunker (treesitter.py) knows no language; everything it needs is here:

* `definitions`: node type -> kind (function, class or module) of a definition
* `containers`: definition types whose members are chunked one by one when the whole is large
  (classes, impl blocks, modules), with a breadcrumb, as the Python chunker does for classes
* `bodies`: node types looked through for definitions: a container's body, and blocks that
  only group top-level code (preprocessor conditionals, namespaces, `extern "C" {}`)
* `name_fields`: the fields tried in turn for a definition's name, followed down
  (C: function_definition -> declarator -> declarator -> identifier)
* `decorations`: comments and attributes that belong to the definition directly below them
* `wrappers`: nodes that wrap one definition and start before it (a C++ template header)
* `assignments`/`values`: an assignment whose value is a function or a type is a definition
  (Lua `M.setup = function`, Zig `const Foo = struct {`), of the value's kind
* `calls`: languages whose definitions are calls (Elixir `def`, `defmodule`): target -> kind
* `receiver`: the field whose type qualifies a method's name (Go `func (c *Command) Run`)

This module is data only: importing it imports no tree-sitter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

# how a name node's text is cut short: generics, parameters, spaces (`Mutex<T>` -> Mutex)
IDENTIFIER_TYPES = frozenset(
    ["identifier", "type_identifier", "simple_identifier", "constant", "name", "word", "variable", "alias"]
)


class Grammar(NamedTuple):
    """How one language's syntax tree is chunked (see the module docstring)."""

    name: str  # what chunker_for returns
    label: str  # for people: "C#"
    module: str  # the grammar wheel's module
    extensions: tuple[str, ...]
    definitions: Mapping[str, str]
    containers: frozenset[str] = frozenset()
    bodies: frozenset[str] = frozenset()
    name_fields: tuple[str, ...] = ("name",)
    decorations: frozenset[str] = frozenset(["comment"])
    wrappers: frozenset[str] = frozenset()
    assignments: frozenset[str] = frozenset()
    values: Mapping[str, str] = {}
    calls: Mapping[str, str] = {}
    receiver: str = ""
    function: str = "language"  # the module's function that returns the grammar


_C_BODIES = frozenset(["preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"])
_C_NAMES = ("declarator", "name")

GRAMMARS: dict[str, Grammar] = {
    g.name: g
    for g in [
        Grammar(
            "go",
            "Go",
            "tree_sitter_go",
            (".go",),
            {
                "function_declaration": "function",
                "method_declaration": "function",
                "type_declaration": "class",
            },
            name_fields=("name", "type_spec", "type_alias"),  # type_declaration holds a type_spec
            receiver="receiver",
        ),
        Grammar(
            "rust",
            "Rust",
            "tree_sitter_rust",
            (".rs",),
            {
                "function_item": "function",
                "struct_item": "class",
                "enum_item": "class",
                "union_item": "class",
                "trait_item": "class",
                "impl_item": "class",
                "mod_item": "module",
                "macro_definition": "function",
            },
            containers=frozenset(["impl_item", "trait_item", "mod_item"]),
            bodies=frozenset(["declaration_list"]),
            name_fields=("name", "type"),  # impl<T> Display for Mutex<T>: the type
            decorations=frozenset(["line_comment", "block_comment", "attribute_item"]),
        ),
        Grammar(
            "java",
            "Java",
            "tree_sitter_java",
            (".java",),
            {
                "class_declaration": "class",
                "interface_declaration": "class",
                "enum_declaration": "class",
                "record_declaration": "class",
                "annotation_type_declaration": "class",
                "method_declaration": "function",
                "constructor_declaration": "function",
                "compact_constructor_declaration": "function",
            },
            containers=frozenset(
                ["class_declaration", "interface_declaration", "enum_declaration", "record_declaration"]
            ),
            bodies=frozenset(["class_body", "interface_body", "enum_body", "enum_body_declarations"]),
            decorations=frozenset(["line_comment", "block_comment"]),
        ),
        Grammar(
            "kotlin",
            "Kotlin",
            "tree_sitter_kotlin",
            (".kt", ".kts"),
            {
                "class_declaration": "class",
                "object_declaration": "class",
                "companion_object": "class",
                "function_declaration": "function",
                "secondary_constructor": "function",
            },
            containers=frozenset(["class_declaration", "object_declaration", "companion_object"]),
            bodies=frozenset(["class_body", "enum_class_body"]),
            decorations=frozenset(["line_comment", "block_comment"]),
        ),
        Grammar(
            "scala",
            "Scala",
            "tree_sitter_scala",
            (".scala", ".sc"),
            {
                "class_definition": "class",
                "object_definition": "class",
                "trait_definition": "class",
                "enum_definition": "class",
                "extension_definition": "class",
                "function_definition": "function",
                "given_definition": "class",
            },
            containers=frozenset(
                [
                    "class_definition",
                    "object_definition",
                    "trait_definition",
                    "enum_definition",
                    "extension_definition",
                    "given_definition",
                ]
            ),
            bodies=frozenset(["template_body", "enum_body", "package_clause", "with_template_body"]),
            decorations=frozenset(["comment", "block_comment"]),
        ),
        Grammar(
            "csharp",
            "C#",
            "tree_sitter_c_sharp",
            (".cs",),
            {
                "class_declaration": "class",
                "struct_declaration": "class",
                "interface_declaration": "class",
                "enum_declaration": "class",
                "record_declaration": "class",
                "method_declaration": "function",
                "constructor_declaration": "function",
                "destructor_declaration": "function",
                "operator_declaration": "function",
                "conversion_operator_declaration": "function",
                "property_declaration": "function",
                "indexer_declaration": "function",
            },
            containers=frozenset(
                ["class_declaration", "struct_declaration", "interface_declaration", "record_declaration"]
            ),
            # namespaces only group: a breadcrumb of them would sit on every chunk of the file
            bodies=frozenset(
                ["namespace_declaration", "declaration_list", "preproc_if", "preproc_else", "preproc_elif"]
            ),
        ),
        Grammar(
            "c",
            "C",
            "tree_sitter_c",
            (".c", ".h"),
            {
                "function_definition": "function",
                "struct_specifier": "class",
                "union_specifier": "class",
                "enum_specifier": "class",
                "type_definition": "class",
            },
            bodies=_C_BODIES,
            name_fields=_C_NAMES,
        ),
        Grammar(
            "cpp",
            "C++",
            "tree_sitter_cpp",
            (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp"),
            {
                "function_definition": "function",
                "class_specifier": "class",
                "struct_specifier": "class",
                "union_specifier": "class",
                "enum_specifier": "class",
                "type_definition": "class",
                "concept_definition": "class",
            },
            containers=frozenset(["class_specifier", "struct_specifier"]),
            bodies=_C_BODIES
            | {"namespace_definition", "declaration_list", "linkage_specification", "field_declaration_list"},
            name_fields=_C_NAMES,
            wrappers=frozenset(["template_declaration"]),
        ),
        Grammar(
            "swift",
            "Swift",
            "tree_sitter_swift",
            (".swift",),
            {
                "class_declaration": "class",
                "protocol_declaration": "class",
                "function_declaration": "function",
                "init_declaration": "function",
                "deinit_declaration": "function",
                "subscript_declaration": "function",
            },
            containers=frozenset(["class_declaration", "protocol_declaration"]),
            bodies=frozenset(["class_body", "enum_class_body", "protocol_body"]),
            decorations=frozenset(["comment", "multiline_comment"]),
        ),
        Grammar(
            "ruby",
            "Ruby",
            "tree_sitter_ruby",
            (".rb", ".rake", ".gemspec"),
            {
                "class": "class",
                "module": "module",
                "singleton_class": "class",
                "method": "function",
                "singleton_method": "function",
            },
            containers=frozenset(["class", "module", "singleton_class"]),
            bodies=frozenset(["body_statement"]),
        ),
        Grammar(
            "php",
            "PHP",
            "tree_sitter_php",
            (".php",),
            {
                "class_declaration": "class",
                "interface_declaration": "class",
                "trait_declaration": "class",
                "enum_declaration": "class",
                "function_definition": "function",
                "method_declaration": "function",
            },
            containers=frozenset(
                ["class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"]
            ),
            bodies=frozenset(
                ["namespace_definition", "compound_statement", "declaration_list", "enum_declaration_list"]
            ),
            function="language_php",
        ),
        Grammar(
            "elixir",
            "Elixir",
            "tree_sitter_elixir",
            (".ex", ".exs"),
            {},
            containers=frozenset(["call"]),
            bodies=frozenset(["do_block"]),
            decorations=frozenset(["comment", "unary_operator"]),  # @doc, @spec, @impl
            calls={
                "defmodule": "module",
                "defprotocol": "module",
                "defimpl": "module",
                "def": "function",
                "defp": "function",
                "defmacro": "function",
                "defmacrop": "function",
                "defguard": "function",
                "defguardp": "function",
                "defdelegate": "function",
                "defn": "function",
                "defnp": "function",
            },
        ),
        Grammar(
            "haskell",
            "Haskell",
            "tree_sitter_haskell",
            (".hs",),
            {
                # a signature takes its function's name, so that the two join as one definition
                "function": "function",
                "signature": "function",
                "bind": "function",
                "data_type": "class",
                "newtype": "class",
                "type_synomym": "class",
                "type_family": "class",
                "class": "class",
                "instance": "class",
            },
            containers=frozenset(["class", "instance"]),
            bodies=frozenset(["declarations", "class_declarations", "instance_declarations"]),
            decorations=frozenset(["comment", "haddock", "pragma"]),
        ),
        Grammar(
            "lua",
            "Lua",
            "tree_sitter_lua",
            (".lua",),
            {"function_declaration": "function"},
            assignments=frozenset(["assignment_statement", "variable_declaration"]),
            values={"function_definition": "function"},
        ),
        Grammar(
            "zig",
            "Zig",
            "tree_sitter_zig",
            (".zig",),
            {"function_declaration": "function", "test_declaration": "function"},
            containers=frozenset(["variable_declaration"]),
            bodies=frozenset(
                ["struct_declaration", "enum_declaration", "union_declaration", "opaque_declaration"]
            ),
            assignments=frozenset(["variable_declaration"]),
            values={
                "struct_declaration": "class",
                "enum_declaration": "class",
                "union_declaration": "class",
                "opaque_declaration": "class",
            },
        ),
        Grammar(
            "bash",
            "shell",
            "tree_sitter_bash",
            (".sh", ".bash", ".bats", ".zsh", ".ksh"),
            {"function_definition": "function"},
        ),
    ]
}

# extension (lowercase, with its dot) -> language name; .h is C unless it looks like C++
EXTENSIONS: dict[str, str] = {ext: g.name for g in GRAMMARS.values() for ext in g.extensions}
# interpreters named on a shebang line -> language name, for extensionless scripts
SHEBANGS: dict[str, str] = {
    "bash": "bash",
    "sh": "bash",
    "zsh": "bash",
    "ksh": "bash",
    "dash": "bash",
    "ruby": "ruby",
    "php": "php",
    "lua": "lua",
    "elixir": "elixir",
}
# a .h file with any of these is C++, else C (the C++ grammar fails on C that names a variable `new`)
CPP_HEADER = re.compile(
    r"^[ \t]*(?:namespace\s+\w+|template\s*<|class\s+\w+[^;]*$|(?:public|private|protected):)", re.M
)
