//! A tokenizer for a small configuration language.
const std = @import("std");
const mem = std.mem;

pub const Tag = enum {
    identifier,
    number,
    equals,
    newline,
    eof,
};

/// One token: its tag and where it is in the source.
pub const Token = struct {
    tag: Tag,
    start: usize,
    end: usize,

    pub fn slice(self: Token, source: []const u8) []const u8 {
        return source[self.start..self.end];
    }
};

pub const Tokenizer = struct {
    source: []const u8,
    index: usize = 0,

    pub fn init(source: []const u8) Tokenizer {
        return .{ .source = source };
    }

    /// Returns the next token, skipping spaces; `.eof` at the end.
    pub fn next(self: *Tokenizer) Token {
        while (self.index < self.source.len and self.source[self.index] == ' ') self.index += 1;
        const start = self.index;
        if (self.index >= self.source.len) return .{ .tag = .eof, .start = start, .end = start };
        const c = self.source[self.index];
        self.index += 1;
        const tag: Tag = switch (c) {
            '=' => .equals,
            '\n' => .newline,
            '0'...'9' => blk: {
                while (self.index < self.source.len and std.ascii.isDigit(self.source[self.index])) self.index += 1;
                break :blk .number;
            },
            else => blk: {
                while (self.index < self.source.len and std.ascii.isAlphanumeric(self.source[self.index])) self.index += 1;
                break :blk .identifier;
            },
        };
        return .{ .tag = tag, .start = start, .end = self.index };
    }
};

test "tokenizes an assignment" {
    var t = Tokenizer.init("width = 80\n");
    try std.testing.expectEqual(Tag.identifier, t.next().tag);
    try std.testing.expectEqual(Tag.equals, t.next().tag);
}
