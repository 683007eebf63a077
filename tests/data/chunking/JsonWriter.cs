using System;
using System.Globalization;
using System.IO;

namespace Example.Json
{
    /// <summary>
    /// Writes JSON tokens to a text writer, tracking nesting so that commas and
    /// indentation come out right.
    /// </summary>
    public class JsonWriter : IDisposable
    {
        private readonly TextWriter _writer;
        private int _depth;
        private bool _needsComma;

        /// <summary>Gets or sets how many spaces one level of nesting indents.</summary>
        public int Indentation { get; set; } = 2;

        /// <summary>Creates a writer that writes to <paramref name="writer"/>.</summary>
        public JsonWriter(TextWriter writer)
        {
            _writer = writer ?? throw new ArgumentNullException(nameof(writer));
        }

        /// <summary>Writes the start of an object: <c>{</c>.</summary>
        public void WriteStartObject()
        {
            WriteSeparator();
            _writer.Write('{');
            _depth++;
            _needsComma = false;
        }

        /// <summary>Writes the end of an object, on its own line.</summary>
        public void WriteEndObject()
        {
            _depth--;
            WriteNewLine();
            _writer.Write('}');
            _needsComma = true;
        }

        /// <summary>Writes a property name followed by a colon.</summary>
        public void WritePropertyName(string name)
        {
            WriteSeparator();
            WriteEscaped(name);
            _writer.Write(": ");
            _needsComma = false;
        }

        /// <summary>Writes a number in the invariant culture, as JSON requires.</summary>
        public void WriteValue(double value)
        {
            WriteSeparator();
            _writer.Write(value.ToString("R", CultureInfo.InvariantCulture));
            _needsComma = true;
        }

        private void WriteSeparator()
        {
            if (_needsComma)
            {
                _writer.Write(',');
            }
            if (_depth > 0)
            {
                WriteNewLine();
            }
        }

        private void WriteNewLine()
        {
            _writer.Write('\n');
            _writer.Write(new string(' ', _depth * Indentation));
        }

        private void WriteEscaped(string text)
        {
            _writer.Write('"');
            foreach (char c in text)
            {
                if (c == '"' || c == '\\') _writer.Write('\\');
                _writer.Write(c);
            }
            _writer.Write('"');
        }

        public void Dispose() => _writer.Dispose();
    }

    public enum Formatting { None, Indented }
}
