"""better-edit-tools: exact, atomic, recoverable file edits for LLM agents and shell scripts.

One module, two programs:

* **CLI** - ``better-edit-tools COMMAND [options]`` with COMMAND one of ``read``, ``replace``,
  ``insert``, ``delete``, ``write``, ``balance``, ``func-range``, ``tag-range``, ``edit``, ``patch``;
* **MCP server** - with no command, a Model Context Protocol server speaking newline-delimited
  JSON-RPC on stdin/stdout, with the tools ``be-read`` ... ``be-edit`` (thirteen).

Both call the same handlers through one tool table (section 9). What it promises, rule by rule,
is in docs/behaviour.md; the public surface is ``__all__``.

Sections (code only uses what is above it):
  1. this docstring
  2. constants and messages  - version, limits, the one message table (en, zh)
  3. errors                  - ToolError, JSON that refuses NaN
  4. text                    - a decoded file as bytes + encoding; line edits, finding text, diffs
  5. diagnostics             - the block a wrong `old` was copied from and its first difference;
                               the placeholder guard
  6. scanners                - languages, tokenizers, balance, the post-edit check, markup,
                               function and tag ranges
  7. workspace               - the context, paths and the sandbox, locks, safe writes, folders
  8. stores                  - snapshots, chips, the commit journal, the scan memory
  9. tools                   - one handler per tool, their words and the TOOLS table
 10. MCP server              - read a line, dispatch, write a line
 11. CLI                     - argparse built from TOOLS
 12. main()                  - pick the mode
"""

import collections  # (already loaded by functools: costs nothing)
import functools
import io
import itertools  # (already loaded by collections: costs nothing)
import os
import re
import sys

# ====================================================================================================
# 2. Constants and messages
# ====================================================================================================

__all__ = [  # the public surface: what scripts and tests may rely on
    # program
    "main", "__version__", "PROGRAM", "TOOLS", "Tool", "find_tool", "tool_names", "call_tool",
    "validate_args", "Context", "user_cache_base", "ToolError", "MESSAGES", "tr",
    # text
    "Text", "decode_file", "read_text", "content_lines", "content_newlines", "encode_block", "split_decoded",
    "line_count", "line_span", "line_start", "skip_lines", "splice_plan", "join_splice", "eol_counts", "eol_name",
    "dominant_eol", "normalize_newlines", "locate_old", "unified_hunk", "looks_double_escaped",
    "unescape_content",
    # diagnostics
    "closest_block", "describe_difference", "block_similarity", "forgiving", "KINDS", "find_placeholder",
    "placeholder_lines",
    # scanners
    "LANGUAGES", "LANGUAGE_TABLE", "detect_language", "check_balance", "new_problems",
    "problems_introduced", "describe_problems", "find_function", "function_names", "function_range",
    "find_tag", "tag_names", "tag_range",
    # workspace and stores
    "locate", "Opened", "payload_of", "commit_files", "FileCommit", "SnapshotStore", "ChipStore",
    "make_view_id", "parse_view_id", "check_view",
]  # fmt: skip

__version__ = "0.3.0"
PROGRAM = "better-edit-tools"
CACHE_APP_NAME = "better-edit-tools-mcp"
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
DEFAULT_MAX_CHIPS = 30
DEFAULT_MAX_SNAPSHOTS = 30
SNAPSHOT_TOTAL_BYTES = 100 * 1024 * 1024
CHIP_MIN_ARGS_BYTES = 50  # failed calls with shorter argument JSON are not worth a chip
VIEW_MEMORY = 256  # viewed texts the server remembers for STALE_VIEW diffs
VIEW_MEMORY_CHARS = 32 << 20  # ... and their characters at most (full reads of large files add up)
VIEW_UNIQUE_BYTES = 1 << 20  # files up to this size get views that may move after an edit too
READ_MAX_LINES = 2000  # MCP default; the CLI default is 0 (no limit)
READ_MAX_CHARS = 100_000  # MCP: characters of file text a reply shows unless max_lines is 0 (docs/mcp.md)
DIFF_LINE_CHARS = 2000  # MCP: characters a line of an edit's diff shows
LISTED_MAX = 1000  # MCP: entries of a list in a reply (balance's `unmatched`, an error's `candidates`)
BINARY_SNIFF_BYTES = 8192
LOCK_WAIT_SECONDS = 30  # how long a call waits for a file another process holds (BETTER_EDIT_LOCK_WAIT)
# Test mode (read once at start): run the code paths of platforms without descriptor-relative calls,
# copy_file_range or flock (Windows) on POSIX too, so they are not shipped untested.
PORTABLE_FALLBACKS = os.environ.get("BETTER_EDIT_PORTABLE_FALLBACKS") == "1"
WRITE_DIFF_LINE_LIMIT = 20000  # a whole-file write diff of more lines is summarised
AUTO_WINDOW_BEFORE, AUTO_WINDOW_AFTER = 10, 20


class _LazyPattern:
    """A regular expression compiled on first use: start-up time is a feature for shell scripts,
    and a command compiles only the patterns it uses. After the first use its methods are plain
    attributes, so a hot loop pays no more than for the compiled pattern itself."""

    _METHODS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split", "pattern")

    def __init__(self, *args):
        self._args = args

    def __getattr__(self, name):  # (only called for what is not yet an attribute)
        compiled = re.compile(*self._args)
        for method in self._METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


def _sha256_new(data=b"", more=0):
    """A SHA-256 object for `data` and `more` bytes to come. Short keys and small views use the
    interpreter's own implementation, so a command that hashes a few bytes does not load OpenSSL;
    large data goes through hashlib (faster per byte)."""
    if len(data) + more >= 1 << 16:
        import hashlib

        return hashlib.sha256(data)
    try:
        if sys.version_info >= (3, 12):
            from _sha2 import sha256
        else:
            from _sha256 import sha256
    except ImportError:  # (an interpreter built without it)
        from hashlib import sha256
    return sha256(data)


# One table for every human-readable text: key -> (English, Chinese). Fields in {braces}.
MESSAGES = {
    # --- errors ---
    "not_found": ("file not found: {file}", "文件不存在：{file}"),
    "not_found.hint": (
        "check the path; relative paths resolve against {base}",
        "检查路径；相对路径以 {base} 为基准",
    ),
    "not_found_near.hint": (
        "did you mean {near}? (see 'did_you_mean'; relative paths resolve against {base})",
        "是否指 {near}？（见 did_you_mean；相对路径以 {base} 为基准）",
    ),
    "not_found_near.hint.cli": (
        "did you mean {near}? (relative paths resolve against {base})",
        "是否指 {near}？（相对路径以 {base} 为基准）",
    ),
    "is_directory": ("{file} is a directory, not a file", "{file} 是目录，不是文件"),
    "path_names_folder": (
        "{file} ends with /, so it names a folder, not a file",
        "{file} 以 / 结尾，表示文件夹而不是文件",
    ),
    "not_found_parent": (
        "file not found: {file} ({part} is a file, not a folder)",
        "文件不存在：{file}（{part} 是文件，不是文件夹）",
    ),
    "not_found.hint_path": ("check the path", "请检查路径"),
    "is_directory.hint": ("name a file inside it", "请指定目录中的某个文件"),
    "not_regular": ("{file} is not a regular file", "{file} 不是普通文件"),
    "not_regular.hint": (
        "name a regular file: a FIFO, socket or device is never opened, so nothing waits on it",
        "请指定普通文件：FIFO、套接字和设备文件不会被打开，因此不会阻塞",
    ),
    "arg_unknown": (
        "unknown argument {name} for {tool}; accepted: {accepted}",
        "{tool} 不接受参数 {name}；可用参数：{accepted}",
    ),
    "arg_unknown_meant": (
        "unknown argument {name} for {tool} (did you mean {meant}?); accepted: {accepted}",
        "{tool} 不接受参数 {name}（是否指 {meant}？）；可用参数：{accepted}",
    ),
    "arg_missing": ("missing required argument {name!r} for {tool}", "{tool} 缺少必需参数 {name!r}"),
    "arg_range.hint": (
        "a range is two arguments: start {a} and end {b}",
        "范围是两个参数：start {a} 与 end {b}",
    ),
    "arg_range.hint.cli": (
        "a range is two options: --start {a} --end {b}",
        "范围是两个选项：--start {a} --end {b}",
    ),
    "arg_after_word.hint": (
        "after_line 0 inserts at the top of the file, -1 at its end",
        "after_line 为 0 表示插入到文件开头，-1 表示末尾",
    ),
    "arg_after_word.hint.cli": (
        "--after-line 0 inserts at the top of the file, -1 at its end",
        "--after-line 0 表示插入到文件开头，-1 表示末尾",
    ),
    "arg_type": (
        "argument {name!r} must be {expected}, got {got}",
        "参数 {name!r} 应为 {expected}，实际为 {got}",
    ),
    "arg_choice": (
        "argument {name!r} must be one of {choices}, got {got!r}",
        "参数 {name!r} 只能是 {choices} 之一，实际为 {got!r}",
    ),
    "arg.hint": ("correct the argument and call again", "修正参数后重试"),
    "arg.hint.cli": ("correct the option and run the command again", "修正选项后重新运行命令"),
    "args_not_object": (
        "arguments must be a JSON object, got {got}",
        "arguments 必须是 JSON 对象，实际为 {got}",
    ),
    "line_below_one": ("{name} must be 1 or more, got {value}", "{name} 必须大于等于 1，实际为 {value}"),
    "target_line_below_one": (
        "target line:{value}: lines are numbered from 1",
        "目标 line:{value}：行号从 1 开始",
    ),
    "target_line_bad": (
        "target line:{value}: the line must be a whole number",
        "目标 line:{value}：行号必须是整数",
    ),
    "max_lines_negative.cli": (
        "--max-lines must be 0 (no limit) or more, got {value}",
        "--max-lines 必须大于等于 0（0 表示不限），实际为 {value}",
    ),
    "max_lines_negative": (
        "max_lines must be 0 (no limit) or more, got {value}",
        "max_lines 必须大于等于 0（0 表示不限），实际为 {value}",
    ),
    "end_before_start": ("end {end} is before start {start}", "end（{end}）小于 start（{start}）"),
    "after_line_invalid.cli": (
        "--after-line must be -1 (end), 0 (top) or a line number, got {value}",
        "--after-line 只能是 -1（末尾）、0（开头）或行号，实际为 {value}",
    ),
    "after_line_invalid": (
        "after_line must be -1 (end), 0 (top) or a line number, got {value}",
        "after_line 只能是 -1（末尾）、0（开头）或行号，实际为 {value}",
    ),
    "out_of_range": (
        "lines {start}-{end} are outside {file}, which has {total} lines",
        "第 {start}-{end} 行超出 {file} 的范围（共 {total} 行）",
    ),
    "end_back_before_start": (
        "end {end} counts back from the end of {file}, which has {total} lines, to before start {start}",
        "end {end} 从 {file} 末尾倒数（共 {total} 行），落在 start {start} 之前",
    ),
    "out_of_range.hint": (
        "valid lines are 1-{total}; read the file again to get current line numbers",
        "有效行号为 1-{total}；请重新读取文件获取当前行号",
    ),
    "after_out_of_range.cli": (
        "--after-line {value} is beyond {file}, which has {total} lines",
        "--after-line {value} 超出 {file} 的范围（共 {total} 行）",
    ),
    "after_out_of_range": (
        "after_line {value} is beyond {file}, which has {total} lines",
        "after_line {value} 超出 {file} 的范围（共 {total} 行）",
    ),
    "after_out_of_range.hint": (
        "use 0-{total}, or -1 to append at the end",
        "请使用 0-{total}，或 -1 追加到末尾",
    ),
    "after_out_of_range.hint.cli": (
        "use --after-line 0-{total}, or -1 to append at the end",
        "请使用 --after-line 0-{total}，或 -1 追加到末尾",
    ),
    "empty_file_range": ("{file} is empty: it has no lines to edit", "{file} 是空文件，没有可编辑的行"),
    "empty_file_range.hint": (
        "use insert with after_line 0, or write",
        "请用 insert（after_line 为 0）或 write",
    ),
    "empty_file_range.hint.cli": (
        "use insert --after-line 0, or write",
        "请用 insert --after-line 0 或 write",
    ),
    "old_empty.cli": ("--old must not be empty", "--old 不能为空"),
    "old_empty": ("old must not be empty", "old 不能为空"),
    "old_empty.hint": (
        "pass the exact text to replace, or start/end line numbers",
        "请传入要替换的原文，或 start/end 行号",
    ),
    "old_empty.hint.cli": (
        "pass the exact text to replace with --old, or line numbers with --start/--end",
        "请用 --old 传入要替换的原文，或用 --start/--end 给出行号",
    ),
    "need_lines_or_old.cli": (
        "replace needs --start (line numbers), --old (the text to find) or --target (a function, tag, marker or line)",
        "replace 需要 --start（行号）、--old（要查找的原文）或 --target（函数、标签、标记或行）",
    ),
    "need_lines_or_old": (
        "replace needs start (line numbers), old (the text to find) or target (a function, tag, marker or line)",
        "replace 需要 start（行号）、old（要查找的原文）或 target（函数、标签、标记或行）",
    ),
    "need_range_or_target.cli": (
        "delete needs --start (and --end) or --target",
        "delete 需要 --start（和 --end）或 --target",
    ),
    "need_range_or_target": (
        "delete needs start (and end) or target",
        "delete 需要 start（和 end）或 target",
    ),
    "end_without_start.cli": ("--end was given without --start", "给出了 --end 但没有 --start"),
    "end_without_start": ("end was given without start", "给出了 end 但没有 start"),
    "target_and_range.cli": (
        "--target cannot be combined with --start, --end or --old",
        "--target 不能与 --start、--end 或 --old 同时使用",
    ),
    "target_and_range": (
        "target cannot be combined with start, end or old",
        "target 不能与 start、end 或 old 同时使用",
    ),
    "target_bad": (
        'target must be {{"kind": K, "value": V}} with K one of line, function, marker, tag; got {got}',
        'target 应为 {{"kind": K, "value": V}}，K 为 line、function、marker、tag 之一；实际为 {got}',
    ),
    "target_bad.cli": (
        "--target must be KIND:VALUE with KIND one of line, function, marker, tag and a VALUE; got {got}",
        "--target 应为 KIND:VALUE，KIND 为 line、function、marker、tag 之一，且须有 VALUE；实际为 {got}",
    ),
    "target_bad.hint": (
        'send a target as {{"kind": "function", "value": "main"}} or as "function:main" (also line:42, '
        "marker:TODO, tag:div)",
        '请以 {{"kind": "function", "value": "main"}} 或 "function:main" 的形式传入 target（也可 line:42、'
        "marker:TODO、tag:div）",
    ),
    "target_bad.hint.cli": (
        "write --target KIND:VALUE, e.g. --target function:main (also line:42, marker:TODO, tag:div)",
        "请写成 --target KIND:VALUE，例如 --target function:main（也可 line:42、marker:TODO、tag:div）",
    ),
    "target_near.hint": (
        'did you mean "{near}"? (the kinds are line, function, marker and tag)',
        '是否想写 "{near}"？（KIND 为 line、function、marker、tag 之一）',
    ),
    "target_near.hint.cli": (
        "did you mean --target {near}? (the kinds are line, function, marker and tag)",
        "是否想写 --target {near}？（KIND 为 line、function、marker、tag 之一）",
    ),
    "content_empty.cli": ("--content must not be empty for insert", "insert 的 --content 不能为空"),
    "content_empty": ("content must not be empty for insert", "insert 的 content 不能为空"),
    "content_empty.hint": (
        "pass at least one line; to add an empty line pass a single newline",
        "至少传入一行；如需插入空行请传入一个换行符",
    ),
    "binary": (
        "{file} looks binary (NUL byte at offset {offset}); it is not edited as text",
        "{file} 看起来是二进制文件（偏移 {offset} 处有 NUL 字节），不能作为文本编辑",
    ),
    "binary.hint": ("edit text files only", "只能编辑文本文件"),
    "binary_utf16.hint_le": (
        "it looks like UTF-16 without a BOM: name its encoding (encoding utf-16-le, or --encoding utf-16-le)",
        "它看起来是没有 BOM 的 UTF-16：请指明编码（encoding utf-16-le，或 --encoding utf-16-le）",
    ),
    "binary_utf16.hint_be": (
        "it looks like UTF-16 without a BOM: name its encoding (encoding utf-16-be, or --encoding utf-16-be)",
        "它看起来是没有 BOM 的 UTF-16：请指明编码（encoding utf-16-be，或 --encoding utf-16-be）",
    ),
    "not_utf8": (
        "{file} is not valid UTF-8 (byte 0x{byte:02x} at offset {offset})",
        "{file} 不是有效的 UTF-8（偏移 {offset} 处字节 0x{byte:02x}）",
    ),
    "not_utf8.hint": (
        'name its encoding, e.g. --encoding gbk / "encoding": "cp1252"',
        '请指定编码，例如 --encoding gbk 或 "encoding": "cp1252"',
    ),
    "encoding_unknown": ("unknown encoding {encoding!r}", "未知编码 {encoding!r}"),
    "encoding_not_text": (
        "encoding {encoding!r} is not a text encoding (it does not turn text into bytes)",
        "{encoding!r} 不是文本编码（不能把文本变成字节）",
    ),
    "encoding_stateful": (
        "encoding {encoding!r} writes a character differently after another (a shift state, as "
        "utf-7 and iso2022 do), so the lines of a file in it cannot be edited one by one",
        "编码 {encoding!r} 中字符的写法取决于前面的字符（如 utf-7、iso2022 的移位状态），无法逐行编辑此类文件",
    ),
    "encoding_not_ascii": (
        "encoding {encoding!r} does not write line breaks and ASCII letters as their ASCII bytes, "
        "so lines could not be found in the file",
        "编码 {encoding!r} 不把换行符和 ASCII 字母写成其 ASCII 字节，无法在文件中找到行",
    ),
    "encoding_not_ascii.hint": (
        "name an ASCII-compatible encoding (gbk, cp1252, latin-1 ...), UTF-16 or UTF-32",
        "请指定与 ASCII 兼容的编码（gbk、cp1252、latin-1 等）、UTF-16 或 UTF-32",
    ),
    "encoding_unknown.hint": (
        "use a Python codec name such as gbk, gb18030, shift_jis, cp1252, latin-1",
        "请使用 Python 编码名，如 gbk、gb18030、shift_jis、cp1252、latin-1",
    ),
    "encoding_declared": (
        "{file} declares the encoding {encoding!r}, which is no ASCII-compatible text encoding Python knows",
        "{file} 声明的编码 {encoding!r} 不是 Python 已知的兼容 ASCII 的文本编码",
    ),
    "encoding_declared.hint": (
        'name its real encoding, e.g. --encoding cp1252 / "encoding": "cp1252"',
        '请指定其真实编码，例如 --encoding cp1252 或 "encoding": "cp1252"',
    ),
    "encoding_decode": (
        "{file} cannot be decoded as {encoding} (offset {offset})",
        "{file} 无法按 {encoding} 解码（偏移 {offset}）",
    ),
    "encoding_decode.hint": (
        "the file is not in {encoding}: name the encoding it is in (e.g. utf-8, gbk, cp1252, latin-1)",
        "该文件不是 {encoding} 编码：请指定它实际的编码（如 utf-8、gbk、cp1252、latin-1）",
    ),
    "encoding_roundtrip": (
        "{file} does not round-trip through {encoding}: re-encoding would change its bytes",
        "{file} 无法按 {encoding} 无损往返：重新编码会改变其字节",
    ),
    "encoding_roundtrip.hint": (
        "name the file's real encoding",
        "请指定文件的真实编码",
    ),
    "encoding_not_wide": (
        "{file} does not read as {encoding}: {why}",
        "{file} 不能按 {encoding} 读取：{why}",
    ),
    "encoding_not_wide.hint": (
        "name the file's real encoding: utf-16-le or utf-16-be for UTF-16 without a BOM (the other "
        "byte order), none for a UTF-8 file",
        "请指定文件的真实编码：无 BOM 的 UTF-16 用 utf-16-le 或 utf-16-be（另一种字节序），UTF-8 文件则不要指定",
    ),
    "why.wide_newlines": (
        "its 0x0A bytes are no line breaks in it (the other byte order, or a file of one byte a character?)",
        "其中的 0x0A 字节在该编码下都不是换行（是另一种字节序，还是单字节编码的文件？）",
    ),
    "encoding_content": (
        "the content has characters that {encoding} cannot encode (first: {char!r})",
        "内容中含有 {encoding} 无法编码的字符（首个：{char!r}）",
    ),
    "encoding_content.hint": (
        "remove those characters or convert the file to UTF-8 first",
        "请去掉这些字符，或先把文件转换为 UTF-8",
    ),
    "content_surrogate": (
        "the content holds U+{point}, half of a UTF-16 pair, which is no character (a \\u escape "
        "of a pair was cut, or sent alone)",
        "内容含有 U+{point}，它是 UTF-16 代理对的一半，不是字符（某个代理对的 \\u 转义被截断或单独发送）",
    ),
    "old_surrogate": (
        "old holds U+{point}, half of a UTF-16 pair, which no text file holds (a \\u escape of a "
        "pair was cut, or sent alone)",
        "old 含有 U+{point}，它是 UTF-16 代理对的一半，任何文本文件中都没有（某个代理对的 \\u 转义被截断或单独发送）",
    ),
    "content_surrogate.hint": (
        "send the character itself, or both halves of its pair",
        "请直接发送该字符，或发送代理对的两半",
    ),
    "content_nul": (
        "the new text holds a NUL character (U+0000) on its line {line}: the file would turn binary "
        "and no later call could read or edit it",
        "新文本的第 {line} 行含有 NUL 字符（U+0000）：文件会变成二进制，之后的调用都无法读取或编辑它",
    ),
    "content_nul.hint": (
        "remove it (\\u0000 in JSON is a NUL character; a literal backslash is \\\\); nothing was changed",
        "请去掉它（JSON 中的 \\u0000 是 NUL 字符；反斜杠本身要写成 \\\\）；未做任何修改",
    ),
    "content_not_utf8": (
        "the content from {source} is not valid UTF-8",
        "来自 {source} 的内容不是有效的 UTF-8",
    ),
    "input_unreadable": ("cannot read {source} {path}: {detail}", "无法读取 {source} {path}：{detail}"),
    "content_stdin_empty": (
        "--content-file -: standard input was empty (did the command before the pipe fail?); nothing was written",
        "--content-file -：标准输入为空（管道前的命令是否失败了？）；未写入任何内容",
    ),
    "content_pipe_empty": (
        "{option} {path}: the pipe was empty (did the command writing to it fail?); nothing was written",
        "{option} {path}：管道为空（写入它的命令是否失败了？）；未写入任何内容",
    ),
    "pipe_empty": (
        "{option} {path}: the pipe was empty (did the command writing to it fail?)",
        "{option} {path}：管道为空（写入它的命令是否失败了？）",
    ),
    "stdin_empty": (
        "{option} -: standard input was empty (did the command before the pipe fail?)",
        "{option} -：标准输入为空（管道前的命令是否失败了？）",
    ),
    "stdin_empty.hint": (
        "send it on standard input, or name a file that holds it",
        "请通过标准输入发送，或给出包含它的文件",
    ),
    "content_stdin_empty_insert.hint": (
        "send the lines to insert on standard input, or pass them with --content",
        "请在标准输入中给出要插入的行，或用 --content 传入",
    ),
    "content_stdin_empty.hint": (
        "to empty the file or delete the lines on purpose, pass --content ''",
        "若确实要清空文件或删除这些行，请传 --content ''",
    ),
    "out_of_memory": ("{tool} ran out of memory", "{tool} 内存不足"),
    "unsendable": (
        "the result of this call did not fit in memory to be sent",
        "本次调用的结果太大，内存不足以发送",
    ),
    "unsendable.hint": (
        "ask for less at once (a range of lines, brief) or free memory",
        "请一次请求更少的内容（一段行，或 brief），或释放内存",
    ),
    "unsendable_made": (
        "the change was made (event {event_id}), but its result did not fit in memory to be sent",
        "变更已完成（事件 {event_id}），但其结果太大，内存不足以发送",
    ),
    "unsendable_made_no_event": (
        "the change was made, but its result did not fit in memory to be sent",
        "变更已完成，但其结果太大，内存不足以发送",
    ),
    "unsendable_made_no_event.hint": (
        "do not repeat the call: read the file to see it; pass brief next time",
        "请勿重复调用：读取文件查看结果；下次可传 brief",
    ),
    "unsendable_made.hint": (
        "do not repeat the call: read the file to see it, or roll back event {event_id}; pass brief next "
        "time",
        "请勿重复调用：读取文件查看结果，或回滚事件 {event_id}；下次可传 brief",
    ),
    "out_of_memory.hint": (
        "work on less at once (a range of lines, fewer items, a smaller file) or free memory; a call "
        "that fails before its commit writes nothing",
        "请一次处理更少的内容（一段行、更少的条目、更小的文件）或释放内存；提交前失败的调用不会写入任何内容",
    ),
    "input_too_large": (
        "{source} {path} does not fit in memory",
        "{source} {path} 无法载入内存",
    ),
    "input_too_large.hint": (
        "send less at once: write the file in parts (write, then insert), or free memory",
        "请分批发送：分段写入文件（先 write 再 insert），或释放内存",
    ),
    "input_device": (
        "{source} {path} is a device, not a file or a pipe: reading it might never end",
        "{source} {path} 是设备，不是文件或管道：读取它可能永远不会结束",
    ),
    "sandbox": (
        "{file} resolves to {path}, outside the root {root}",
        "{file} 解析为 {path}，位于根目录 {root} 之外",
    ),
    "sandbox.hint": (
        "use a path inside {root}",
        "请使用 {root} 之内的路径",
    ),
    "rollback_outside_root": (
        "event {event_id} also changed {file}, outside the root {root}: a rollback with this root "
        "would undo only part of it",
        "事件 {event_id} 还修改了根目录 {root} 之外的 {file}：以此根目录回滚只会撤销其中一部分",
    ),
    "rollback_outside_root.hint": (
        "roll it back from a server or command whose root holds all its files (or none)",
        "请在根目录包含其全部文件（或未设根目录）的服务器或命令中回滚它",
    ),
    "w.commit_outside_root": (
        "event {event_id} also changed {file}, outside the root {root}: its snapshots are kept "
        "(forgetting them would take that file's undo from a server that can reach it)",
        "事件 {event_id} 还修改了根目录 {root} 之外的 {file}：其快照已保留（忘记它们会让能访问该文件的服务器失去撤销）",
    ),
    "sandbox_state": (
        "{file} is among the snapshots, chips, commit records and kept old texts better-edit-tools "
        "keeps in {base}: written over, they could no longer undo anything",
        "{file} 位于 better-edit-tools 在 {base} 中保存的快照、chip、提交记录和保留的旧文本之中：改写它们后将无法再撤销任何修改",
    ),
    "sandbox_state.hint": (
        "edit the files of your project; the tool keeps these itself. Nothing was changed",
        "请编辑项目中的文件；这些文件由工具自行维护。未做任何修改",
    ),
    "patch_outside": (
        "the patch names {file}, which is outside the current folder",
        "补丁中的 {file} 位于当前文件夹之外",
    ),
    "patch_outside.hint": (
        "git apply refuses such paths too: run the command in a folder that holds the file, give "
        "--root, or pass --unsafe-paths if you mean it",
        "git apply 同样拒绝此类路径：请在包含该文件的文件夹中运行，或指定 --root，确有需要时传入 --unsafe-paths",
    ),
    "sandbox_name": (
        "path {file!r} is refused: {why}",
        "路径 {file!r} 被拒绝：{why}",
    ),
    "sandbox_name.hint": (
        "name the file by a plain path inside the root, without NUL bytes or remote hosts",
        "请用根目录内的普通路径指定文件（不含 NUL 字节或远程主机）",
    ),
    "path_unencodable": (
        "the file name {file} cannot be encoded for this file system (a lone surrogate?)",
        "文件名 {file} 无法按本文件系统编码（含孤立代理字符？）",
    ),
    "name_too_long": (
        "a name in the path {path} is longer than its file system takes (255 bytes on most): {detail}",
        "路径 {path} 中有名称超过了文件系统允许的长度（多数为 255 字节）：{detail}",
    ),
    "path_too_long": (
        "the path {file} is {length} characters long; the longest this system takes is {max}",
        "路径 {file} 长 {length} 个字符；本系统最长只接受 {max} 个",
    ),
    "too_large_memory": (
        "{file} ({size} bytes) is too large to load into memory",
        "{file}（{size} 字节）太大，无法载入内存",
    ),
    "too_large_memory.hint": (
        "read a smaller range with start/end, or free memory",
        "请用 start/end 读取较小的范围，或释放内存",
    ),
    "too_large_memory.hint.cli": (
        "read a smaller range with --start/--end, or free memory",
        "请用 --start/--end 读取较小的范围，或释放内存",
    ),
    "readback_temp": (
        "read-back check failed for {path}: the disk did not keep the bytes just written",
        "{path} 写后校验失败：磁盘未保存刚写入的内容",
    ),
    "readback_temp.hint": (
        "check the disk; the file was not changed",
        "请检查磁盘；文件未被修改",
    ),
    "restore_failed": (
        "{path} could not be put back after the change failed ({detail}); its old bytes are kept",
        "变更失败后无法恢复 {path}（{detail}）；其原内容已保留",
    ),
    "restore_failed.hint": (
        "free space or fix the permission, then run any command of this tool: it finishes putting the "
        "file back first",
        "请释放空间或修正权限，然后运行本工具的任一命令：它会先完成恢复该文件",
    ),
    "permission": ("permission denied for {path}: {detail}", "没有权限访问 {path}：{detail}"),
    "permission.hint": (
        "check the file's and its directory's permissions",
        "请检查文件及其所在目录的权限",
    ),
    "io": ("I/O error on {path}: {detail}", "{path} 读写出错：{detail}"),
    "io.hint": (
        "check free space and the file system; the file was not changed",
        "请检查磁盘空间和文件系统；文件未被修改",
    ),
    "io_no_space.hint": (
        "free space on that file system: bytes, or files (inodes, which `df -i` shows: a disk of many "
        "small files runs out of those first); the file was not changed",
        "请在该文件系统上腾出空间：字节或文件数（inode，可用 `df -i` 查看：大量小文件会先耗尽 inode）；文件未被修改",
    ),
    "io_descriptors_restore.hint": (
        "this process may open too few files: raise the limit (ulimit -n), then run any command of this "
        "tool: it finishes putting the file back first",
        "本进程可打开的文件数太少：请提高上限（ulimit -n），然后运行本工具的任一命令：它会先完成恢复该文件",
    ),
    "io_descriptors.hint": (
        "this process may open too few files: raise the limit (ulimit -n) or edit fewer files in one "
        "call; nothing was changed",
        "本进程可打开的文件数太少：请提高上限（ulimit -n）或在一次调用中编辑更少的文件；未做任何修改",
    ),
    "permission_rofs.hint": (
        "remount it read-write (mount -o remount,rw), or edit a copy on a writable file system. Nothing "
        "was changed",
        "请将其重新挂载为可读写（mount -o remount,rw），或在可写的文件系统上编辑副本。未做任何更改",
    ),
    "permission_sticky.hint": (
        "it is another user's file in a folder with the sticky bit (as /tmp): only its owner may delete "
        "or replace it; ask its owner (or root). Nothing was changed",
        "这是粘滞位文件夹（如 /tmp）中其他用户的文件：只有其所有者能删除或替换它；请联系其所有者（或 root）。"
        "未做任何修改",
    ),
    "permission_read_only.hint": (
        "the file has no write permission: make it writable (chmod u+w) if it is meant to change. "
        "Nothing was changed",
        "该文件没有写权限：如确需修改，请先使其可写（chmod u+w）。未做任何修改",
    ),
    "permission_read_only_folder.hint": (
        "the folder has no write permission (a file made, renamed or deleted in it needs it): make it "
        "writable (chmod u+w) if it is meant to change. Nothing was changed",
        "该文件夹没有写权限（在其中新建、改名或删除文件都需要它）：如确需修改，请先使其可写（chmod u+w）。未做任何修改",
    ),
    "perm.lock_folder": ("the lock folder is not a private folder of ours", "锁文件夹不是本程序的私有文件夹"),
    "permission_eperm.hint": (
        "the system refused the operation itself: the file or its folder may be immutable or "
        "append-only (lsattr shows i or a), or the folder sticky and owned by another user. Nothing "
        "was changed",
        "系统拒绝了该操作本身：文件或其所在文件夹可能是不可变或仅追加的（lsattr 显示 i 或 a），"
        "或文件夹设置了粘滞位且属于其他用户。未做任何修改",
    ),
    "io_busy.hint": (
        "the file is busy or a mount point: a file bind-mounted from the same file system cannot be "
        "replaced; edit it where it is mounted from. Nothing was changed",
        "文件正忙或是挂载点：从同一文件系统绑定挂载的文件无法被替换，请在其挂载来源处编辑；未做任何修改",
    ),
    "io_link_loop.hint": (
        "a symbolic link on this path leads back to itself: point it at a file or name the file "
        "itself; nothing was changed",
        "此路径上的符号链接指回了自身：请让它指向一个文件，或直接指定该文件；未做任何修改",
    ),
    "io_size_limit.hint": (
        "a file this call writes (the new file, or the copy of the old bytes an in-place write keeps "
        "for its undo) would pass this process's file-size limit (ulimit -f): raise it; the file was "
        "not changed",
        "本次调用写入的文件（新文件，或原地写入为撤销而保留的原内容副本）会超过本进程的文件大小上限（ulimit -f）："
        "请提高上限；文件未被修改",
    ),
    "edit_one_of": ("give exactly one of edits or patch", "edits 与 patch 必须且只能给一个"),
    "edits_bad": (
        "edits must be an array of 1 to {max} items, got {got}",
        "edits 必须是 1 到 {max} 个条目的数组，收到 {got}",
    ),
    "edits_too_many": (
        "edits holds {count} items, at most {max} go in one call",
        "edits 含 {count} 个条目，一次调用最多 {max} 个",
    ),
    "edits_too_many.hint": (
        "split the items into calls of at most {max} (each call is all or nothing on its own)",
        "请把条目拆成每次最多 {max} 个的多次调用（每次调用各自全部成功或全不写入）",
    ),
    "item_not_object": ("an edit item must be an object, got {got}", "编辑条目必须是对象，收到 {got}"),
    "edit_failed": (
        "item {index} ({file}): {message} [{failed} of {count} items failed; see 'failed'; nothing was written]",
        "条目 {index}（{file}）：{message}［{count} 个条目中 {failed} 个失败，见 failed；未写入任何内容］",
    ),
    "edit_overlap": (
        "items {first} ({first_file}) and {second} ({second_file}) touch overlapping lines of the same file",
        "条目 {first}（{first_file}）与 {second}（{second_file}）修改了同一文件中重叠的行",
    ),
    "edit_repeated": (
        "items {first} and {second} ({file}) insert the same lines at the same place",
        "条目 {first} 与 {second}（{file}）在同一位置插入相同的行",
    ),
    "edit_repeated.hint": (
        "drop the copy: an item's lines are added once; to add them twice, put them twice in one item",
        "请删除重复的条目：一个条目的行只添加一次；若要添加两次，请在一个条目中写两遍",
    ),
    "edit_file_and_folder": (
        "items {first} ({first_file}) and {second} ({second_file}) use {first_file} both as a file and as a folder",
        "条目 {first}（{first_file}）与 {second}（{second_file}）把 {first_file} 既当作文件又当作文件夹",
    ),
    "edit_file_and_folder.hint": (
        "a call cannot make a path both a file and a folder: drop one of the items",
        "一次调用不能让同一路径既是文件又是文件夹：请去掉其中一个条目",
    ),
    "edit_encodings": (
        "items {items} name {file} with different encodings ({names}); a file has one encoding",
        "条目 {items} 以不同编码（{names}）指定 {file}；一个文件只有一种编码",
    ),
    "patch_repeated": (
        "hunk {hunk} of {file} repeats hunk {first} line for line, at the same place",
        "{file} 的第 {hunk} 块与第 {first} 块逐行相同，且位置相同",
    ),
    "patch_repeated.hint": (
        "drop the copy: a hunk's lines are added once; to add them twice, put them twice in one hunk",
        "请删除重复的块：一个块的行只添加一次；若要添加两次，请在一个块中写两遍",
    ),
    "patch_overlap_names": (
        "hunk {first} of {first_file} and hunk {second} of {second_file} touch overlapping lines of one "
        "file: {first_file} and {second_file} name the same file",
        "{first_file} 的第 {first} 块与 {second_file} 的第 {second} 块修改了同一文件中重叠的行："
        "{first_file} 与 {second_file} 指向同一个文件",
    ),
    "patch_overlap_names.hint": (
        "name each file once in the diff: drop or merge the changes made under one of its names",
        "在 diff 中每个文件只出现一次：去掉或合并以其中一个名字所做的修改",
    ),
    "patch_overlap": (
        "hunks {first} and {second} of {file} touch overlapping lines",
        "{file} 的第 {first} 块与第 {second} 块修改了重叠的行",
    ),
    "patch_overlap.hint": (
        "merge them into one hunk, or make the diff again (git diff never writes overlapping hunks)",
        "请把它们合并为一个块，或重新生成 diff（git diff 不会生成重叠的块）",
    ),
    "edit_overlap.hint": (
        "merge them into one item, or fix their line numbers (both refer to the file before the call)",
        "请合并为一个条目，或修正行号（两者都指调用前的文件）",
    ),
    "patch_empty": ("the patch holds no hunk", "补丁中没有任何块"),
    "input_inline.hint": (
        "that is the text itself, and {source} names a file: put the text in a file, or pipe it in and give - "
        "(printf '%s' \"$TEXT\" | better-edit-tools COMMAND -)",
        "那是文本本身，而 {source} 需要的是文件名：请把文本写入文件，或通过管道传入并给出 -"
        "（printf '%s' \"$TEXT\" | better-edit-tools COMMAND -）",
    ),
    "patch_empty.hint.cli": (
        "pass a unified diff (diff -u, git diff): `patch` reads it from the file named right after the command, "
        "--patch-file or standard input, and the files it changes are named inside it",
        "请传入统一格式 diff（diff -u、git diff）：`patch` 从紧跟命令的文件、--patch-file 或标准输入读取它，"
        "要修改的文件名写在 diff 之内",
    ),
    "patch_empty.hint": (
        "pass a unified diff (diff -u, git diff): ---/+++ file headers, each followed by @@ hunks",
        "请传入统一格式 diff（diff -u、git diff）：---/+++ 文件头，其后是 @@ 块",
    ),
    "patch_unsupported": (
        "the patch asks for something not supported: {what} (renames, copies, binary patches and submodules)",
        "补丁包含不支持的操作：{what}（重命名、复制、二进制补丁和子模块）",
    ),
    "patch_unsupported.hint": (
        "patch applies text hunks only: apply renames, copies, binary and submodule changes with git apply",
        "patch 只应用文本块：重命名、复制、二进制和子模块的修改请用 git apply",
    ),
    "patch_no_header": (
        "line {line} of the patch starts a hunk before any ---/+++ file header",
        "补丁第 {line} 行的块前没有 ---/+++ 文件头",
    ),
    "patch_stray_line": (
        "line {line} of the patch is inside hunk {hunk} of {file} but is not a hunk line: {text!r}",
        "补丁第 {line} 行位于 {file} 的第 {hunk} 块内，但不是块中的行：{text!r}",
    ),
    "patch_no_hunk": (
        "no @@ line follows the header of {file} (line {header} of the patch): line {line} is {text!r}",
        "补丁中 {file} 的文件头（第 {header} 行）之后没有 @@ 行：第 {line} 行是 {text!r}",
    ),
    "patch_bare_hunk": (
        "line {line} of the patch, {text!r}, opens a hunk of {file} without the line numbers of an @@ "
        "line (@@ -START,COUNT +START,COUNT @@): where its lines go cannot be read from it",
        "补丁第 {line} 行 {text!r} 开启了 {file} 的一个块，但没有 @@ 行所需的行号（@@ -起始,行数 +起始,行数 @@）：无法从中得知这些行的位置",
    ),
    "patch_no_hunk_end": (
        "no @@ line follows the header of {file} (line {header} of the patch): the patch ends there",
        "补丁中 {file} 的文件头（第 {header} 行）之后没有 @@ 行：补丁到此结束",
    ),
    "patch_one_hunk": (
        "hunk {hunk} of {file} creates or deletes the whole file, yet the patch has {count} hunks for it",
        "{file} 的第 {hunk} 块新建或删除整个文件，但补丁中该文件共有 {count} 块",
    ),
    "patch_one_hunk.hint": (
        "a file the patch creates or deletes takes exactly one hunk: merge them, or send the file with {write}",
        "补丁新建或删除的文件只能有一块：请合并各块，或用 {write} 写入该文件",
    ),
    "patch_unclear_pair": (
        "hunk {hunk} of {file} miscounts its lines and ends at line {line} of the patch, a ---/+++ pair "
        "naming {file} again: a removed and an added line of the hunk, or a second header?",
        "{file} 的第 {hunk} 块行数不符，且止于补丁第 {line} 行起的 ---/+++ 两行（再次指向 {file}）："
        "它们是该块删除和添加的行，还是第二个文件头？",
    ),
    "patch_unclear_pair.hint": (
        "correct the hunk's @@ counts (they decide whether those two lines belong to it), or give "
        "each file one header",
        "请改正该块 @@ 行中的行数（由它决定这两行是否属于该块），或让每个文件只有一个文件头",
    ),
    "patch_names_differ": (
        "the ---/+++ header at line {line} of the patch names {file}, but the diff --git header before "
        "it names {git}",
        "补丁第 {line} 行的 ---/+++ 文件头指向 {file}，但它之前的 diff --git 文件头指向 {git}",
    ),
    "patch_names_differ.hint": (
        "give each file its own diff --git header, or send the patch as git diff wrote it",
        "请为每个文件各写一个 diff --git 文件头，或按 git diff 的原样发送补丁",
    ),
    "patch_no_old_lines": (
        "hunk {hunk} of {file} counts {count} lines of old text but holds only + lines: nothing tells where "
        "they go",
        "{file} 的第 {hunk} 块声明有 {count} 行旧内容，却只有 + 行：无法确定这些行应放在哪里",
    ),
    "patch_no_old_lines.hint": (
        "give the hunk the context lines it counts, or write an insertion as @@ -N,0 +M,K @@ (after line N)",
        "请给该块加上其声明的上下文行，或将插入写成 @@ -N,0 +M,K @@（插在第 N 行之后）",
    ),
    "patch_empty_hunk": ("hunk {hunk} of {file} holds no line", "{file} 的第 {hunk} 块没有任何行"),
    "patch_no_hunk.hint": (
        "start each hunk with its line @@ -START,COUNT +START,COUNT @@, as git diff and diff -u write it",
        "每个块以 @@ -起始,行数 +起始,行数 @@ 行开头，如 git diff 和 diff -u 所写",
    ),
    "patch_stray_line.hint": (
        "every line of a hunk starts with ' ' (context), '-' (removed), '+' (added) or '\\ ' (\\ No newline "
        "at end of file); a context line keeps its leading space; put other text outside the patch",
        "块中每行都以 ' '（上下文）、'-'（删除）、'+'（添加）或 '\\ '（\\ No newline at end of file）开头；"
        "上下文行须保留行首空格；其他文字请放到补丁之外",
    ),
    "patch_exists": ("the patch creates {file}, which already exists", "补丁要新建 {file}，但它已存在"),
    "patch_past_end": (
        "hunk {hunk} of {file} adds lines after line {line}, but {file} has {total} lines",
        "{file} 的第 {hunk} 块要在第 {line} 行之后添加内容，但 {file} 只有 {total} 行",
    ),
    "patch_past_end.hint": (
        "make the diff against the file as it is now (git diff), or give the hunk context lines",
        "请基于文件当前内容重新生成 diff（git diff），或给该块加上上下文行",
    ),
    "patch_exists.hint": (
        "make the diff against the file as it is now (git diff), or delete the file first",
        "请基于文件当前内容重新生成 diff（git diff），或先删除该文件",
    ),
    "patch_sections": (
        "hunk {hunk} of {file} is in a second ---/+++ section for that file: its lines are not at line "
        "{line}, where its header puts them, but at line {other}, and an earlier section adds lines like "
        "them, so the sections may be meant one after the other",
        "{file} 的第 {hunk} 块位于该文件的第二个 ---/+++ 段中：其行不在块头所指的第 {line} 行，而在第 {other} 行，"
        "且前面的段添加了类似的行，这些段可能是要依次应用的",
    ),
    "patch_sections_mismatch": (
        "hunk {hunk} of {file} is in a second ---/+++ section for that file and does not match the file "
        "at line {line} or anywhere else, but an earlier section adds lines like its own: the sections "
        "look meant one after the other, and each section of a file applies to the file as it is",
        "{file} 的第 {hunk} 块位于该文件的第二个 ---/+++ 段中，在第 {line} 行及其他位置都不匹配，但前面的段添加了与其相同的行："
        "这些段看来是要依次应用的，而同一文件的每一段都应用于文件的当前内容",
    ),
    "patch_sections_insert": (
        "hunk {hunk} of {file} has no context lines and is in a second ---/+++ section for that file, "
        "whose earlier sections add or remove lines above its line {line}: the sections may be meant one "
        "after the other, and its line would then be another",
        "{file} 的第 {hunk} 块没有上下文行，且位于该文件的第二个 ---/+++ 段中，而前面的段在其第 {line} 行之上增删了行："
        "这些段可能是要依次应用的，那样它的行就是另一行",
    ),
    "patch_sections.hint": (
        "send one ---/+++ section per file (a diff of the whole change), or apply the sections as "
        "separate patches",
        "每个文件只用一个 ---/+++ 段（整个改动的一份 diff），或把各段作为单独的补丁依次应用",
    ),
    "patch_ambiguous": (
        "hunk {hunk} of {file} matches {count} places (lines {where})",
        "{file} 的第 {hunk} 块匹配 {count} 处（第 {where} 行）",
    ),
    "patch_ambiguous.hint": (
        "give the hunk more context lines, or correct its line numbers",
        "请给该块更多上下文行，或修正其行号",
    ),
    "patch_other_place": (
        "hunk {hunk} of {file} matches at its line {line}, and also at line {other}, where the diff "
        "points as well (the end of the file, for a hunk with no context below its change; or where "
        "another hunk of the file moved to): which one it was made for cannot be told",
        "{file} 的第 {hunk} 块在其第 {line} 行匹配，也在第 {other} 行匹配，而 diff 同样指向那里（对下方没有上下文的块是文件末尾；"
        "或是该文件另一块移动到的位置）：无法判断它是为哪一处生成的",
    ),
    "patch_other_place.hint": (
        "read the file and make the diff again, or give the hunk more context lines",
        "请读取该文件并重新生成 diff，或给该块更多上下文行",
    ),
    "patch_insert_moved": (
        "hunk {hunk} of {file} has no context lines, and another hunk of the file was found "
        "{offset} lines from its stated line: whether this one moved too cannot be told (stated: "
        "after line {line})",
        "{file} 的第 {hunk} 块没有上下文行，而该文件的另一块在距其所述行 {offset} 行处找到：无法判断本块是否也随之移动"
        "（所述位置：第 {line} 行之后）",
    ),
    "patch_insert_moved.hint": (
        "make the diff again with context lines (git diff without -U0), or against the file as it is now",
        "请带上下文行重新生成 diff（git diff 不加 -U0），或基于文件当前内容重新生成",
    ),
    "patch_mismatch": (
        "hunk {hunk} of {file} does not match the file at line {line} or anywhere else",
        "{file} 的第 {hunk} 块在第 {line} 行及其他位置都不匹配",
    ),
    "patch_applied": (
        "hunk {hunk} of {file} does not match at line {line}, but its new lines stand at line {at} "
        "already: the patch looks applied, and its old lines at line {other} are another copy",
        "{file} 的第 {hunk} 块在第 {line} 行不匹配，但其新内容已位于第 {at} 行：该补丁似乎已应用过，"
        "第 {other} 行的旧内容是另一份副本",
    ),
    "patch_applied_nowhere": (
        "hunk {hunk} of {file} does not match the file at line {line} or anywhere else, but its new "
        "lines stand at line {at}: the patch looks applied already",
        "{file} 的第 {hunk} 块在第 {line} 行及其他位置都不匹配，但其新内容已位于第 {at} 行：该补丁似乎已应用过",
    ),
    "patch_applied_nowhere.hint": (
        "read the file: it already holds this change; make the diff again against it if more is needed",
        "请读取该文件：它已包含此修改；如还需其他修改，请基于当前内容重新生成 diff",
    ),
    "patch_applied_here": (
        "hunk {hunk} of {file} adds lines that already stand beside its context at line {at}: "
        "the patch may be applied already, and applying it again would add them twice",
        "{file} 的第 {hunk} 块要添加的行已紧挨着第 {at} 行的上下文：该补丁可能已应用过，再次应用会重复添加",
    ),
    "patch_applied.hint": (
        "read the file: it already holds this change; make the diff again if more is needed",
        "请读取该文件：它已包含此修改；如还需其他修改，请重新生成 diff",
    ),
    "patch_applied_here.hint": (
        "read the file: if it holds this change already, there is nothing to do; to add the lines "
        "once more (another copy of lines that stand there), call again with force",
        "请读取该文件：如已包含此修改则无需操作；如确要再添加一份这些行（与已有行相同的副本），请加 force 重试",
    ),
    "patch_applied_here.hint.cli": (
        "read the file: if it holds this change already, there is nothing to do; to add the lines "
        "once more (another copy of lines that stand there), run it again with --force",
        "请读取该文件：如已包含此修改则无需操作；如确要再添加一份这些行（与已有行相同的副本），请加 --force 重试",
    ),
    "patch_changed_in_place": (
        "hunk {hunk} of {file} does not match at line {line}, yet its line {text} still stands at line "
        "{at}: the lines were changed there, and the same lines at line {other} are another copy, not "
        "the place the diff was made for",
        "{file} 的第 {hunk} 块在第 {line} 行不匹配，但其中的行 {text} 仍在第 {at} 行：这些行是在原处被修改的，"
        "第 {other} 行的相同内容是另一份副本，不是该 diff 所针对的位置",
    ),
    "patch_changed_in_place.hint": (
        "see 'actual' for those lines now; read the file and make the diff again",
        "参见 actual 中这些行的现状；请重新读取文件并重新生成 diff",
    ),
    "patch_delete_link": (
        "hunk {hunk} deletes {file} (+++ /dev/null), but {file} is a symbolic link: the file it points to "
        "({path}) would go and the link would stay",
        "第 {hunk} 块删除 {file}（+++ /dev/null），但 {file} 是符号链接：会删除它指向的文件（{path}）而保留该链接",
    ),
    "patch_delete_link.hint": (
        "remove the link itself with rm, or make the patch name the file it points to",
        "请用 rm 删除链接本身，或让补丁指明它指向的文件",
    ),
    "patch_delete_mismatch": (
        "hunk {hunk} deletes {file} (+++ /dev/null), but the lines it removes are not the file's whole "
        "content ({count} lines now)",
        "第 {hunk} 块删除 {file}（+++ /dev/null），但它删除的行不是该文件的全部内容（现有 {count} 行）",
    ),
    "patch_delete_mismatch.hint": (
        "the file changed since the diff was made: make the diff again, or delete the file with the "
        "lines it holds now",
        "自生成 diff 以来文件已改变：请重新生成 diff，或按文件现有内容删除它",
    ),
    "patch_both_null": (
        "the file header at line {line} of the patch names /dev/null on both sides (--- and +++): it "
        "neither creates nor deletes a file",
        "补丁第 {line} 行的文件头两侧（--- 与 +++）都是 /dev/null：既不新建也不删除文件",
    ),
    "patch_mismatch.hint": (
        "see 'closest' for the most similar lines; read the file and make the diff again",
        "参见 closest 中最相似的行；请重新读取文件并重新生成 diff",
    ),
    "undo_left": (
        "the change failed ({cause}) and was undone, except in {path}: another program wrote or "
        "replaced it after this call changed it, so it was left as that program left it ({why})",
        "变更失败（{cause}）并已撤销，但 {path} 除外：本次调用修改它之后另一个程序写入或替换了它，"
        "因此保持该程序留下的样子（{why}）",
    ),
    "cause_signal": ("{signal} came before it was written in full", "在完整写入之前收到了 {signal}"),
    "undo_left.hint": (
        "compare the file with its old text and merge by hand; no other file was changed",
        "请将该文件与其原内容比较并手动合并；其他文件均未改变",
    ),
    "rollback_growing": (
        "event {event_id} was still being saved by its edit each time this rollback chose it; "
        "nothing was rolled back",
        "每次本回滚选择事件 {event_id} 时，其编辑仍在保存该事件；未回滚任何内容",
    ),
    "rollback_growing.hint": (
        "call {trx_status} to see the event, then roll it back again",
        "请调用 {trx_status} 查看该事件，然后再次回滚",
    ),
    "conflict_cause": (
        "{file} was changed by another program during this edit",
        "编辑期间 {file} 被其他程序修改",
    ),
    "conflict": (
        "{file} was changed by another program during this edit; nothing was written",
        "编辑期间 {file} 被其他程序修改；未写入任何内容",
    ),
    "conflict.hint": ("read the file again and redo the edit", "请重新读取文件后再编辑"),
    "rollback_not_kept": (
        "a forced rollback keeps what it overwrites as an event of its own, and here it cannot "
        "({detail}); nothing was written",
        "强制回滚会把它覆盖的内容保存为一个独立事件，而此处无法保存（{detail}）；未写入任何内容",
    ),
    "rollback_not_kept.hint": (
        "copy the files aside first, or wait for the other process and try again; without force the "
        "rollback refuses files changed since",
        "请先另存这些文件，或等待其他进程结束后重试；不加 force 时，回滚会拒绝此后被修改过的文件",
    ),
    "folder_moved": (
        "the folder of {file} was moved or replaced during this edit (its path leads elsewhere now); "
        "nothing was written",
        "编辑期间 {file} 所在的文件夹被移动或替换（其路径现在指向别处）；未写入任何内容",
    ),
    "folder_moved.hint": (
        "read the file again at the path you mean and redo the edit",
        "请按你要编辑的路径重新读取文件后再编辑",
    ),
    "undone_signal": (
        "the signal ({signal}) came before the change was written in full: it was undone, every file "
        "is as it was.",
        "信号（{signal}）在变更完整写入之前到来：变更已撤销，所有文件保持原样。",
    ),
    "undone_signal_left": (
        "the signal ({signal}) came before the change was written in full, and its undo did not put "
        "every file back: {detail}",
        "信号（{signal}）在变更完整写入之前到来，其撤销未能恢复所有文件：{detail}",
    ),
    "stood_signal": (
        "the change was written in full before the signal ({signal}) came: it stands (event {event_id}); "
        "roll it back to undo it",
        "在信号（{signal}）到来之前变更已完整写入：它保持有效（事件 {event_id}）；如需撤销请回滚",
    ),
    "stood_unsent": (
        "the change was made (event {event_id}), but its result could not be sent ({detail}): it "
        "stands; roll it back to undo it",
        "变更已完成（事件 {event_id}），但其结果无法发送（{detail}）：它保持有效；如需撤销请回滚",
    ),
    "stood_unsent_no_event": (
        "the change was made, but its result could not be sent ({detail}): it stands",
        "变更已完成，但其结果无法发送（{detail}）：它保持有效",
    ),
    "stood_signal_no_event": (
        "the change was written in full before the signal ({signal}) came: it stands",
        "在信号（{signal}）到来之前变更已完整写入：它保持有效",
    ),
    "conflict_rollback": (
        "{file} was changed by another program while this rollback ran; nothing was rolled back",
        "回滚进行期间 {file} 被其他程序修改；未回滚任何内容",
    ),
    "conflict_rollback.hint": (
        "read the file: the other program's change stands; roll back again to undo the event, with "
        "force to write over that change",
        "请读取该文件：其他程序的修改保持不变；如仍要撤销该事件请再次回滚，加 force 则覆盖该修改",
    ),
    "lock_busy": (
        "{file} is locked by another better-edit-tools process (pid {pid}), which edits it or a file "
        "that shares its lock (one of {locks}); this call waited {seconds} s for the lock; nothing was written",
        "{file} 被另一个 better-edit-tools 进程（pid {pid}）锁定（它在编辑此文件，或与其共用一把锁的文件，共 {locks} 把）；"
        "本次调用等待了 {seconds} 秒；未写入任何内容",
    ),
    "lock_busy.hint": (
        "call again when that process has finished; if it hangs, end it (kill {pid}): the next call "
        "undoes whatever it left half-done. BETTER_EDIT_LOCK_WAIT=SECONDS sets how long to wait",
        "等该进程结束后重试；若它已挂起，请结束它（kill {pid}），下一次调用会撤销它未完成的修改。"
        "BETTER_EDIT_LOCK_WAIT=秒数 可设置等待时长",
    ),
    "lock_busy_unknown": (
        "{file} is locked by another better-edit-tools process, which edits it or a file that shares "
        "its lock (one of {locks}); this call waited {seconds} s for the lock; nothing was written",
        "{file} 被另一个 better-edit-tools 进程锁定（它在编辑此文件，或与其共用一把锁的文件，共 {locks} 把）；"
        "本次调用等待了 {seconds} 秒；未写入任何内容",
    ),
    "lock_busy_unknown.hint": (
        "call again when that process has finished. BETTER_EDIT_LOCK_WAIT=SECONDS sets how long to wait",
        "等该进程结束后重试。BETTER_EDIT_LOCK_WAIT=秒数 可设置等待时长",
    ),
    "mismatch_lines": (
        "the text at lines {start}-{end} of {file} is not the given old text",
        "{file} 第 {start}-{end} 行的内容与 old 不一致",
    ),
    "mismatch_lines.hint": (
        "see 'actual'; 'found_at' lists where old does occur (your line numbers may be stale)",
        "参见 actual；found_at 列出 old 实际出现的位置（行号可能已过期）",
    ),
    "mismatch_lines_part.hint": (
        "old stands inside lines {start}-{end} but is not their whole text: with start, old must be "
        "the whole lines; leave start out to replace just that text",
        "old 位于第 {start}-{end} 行之内，但不是这些行的全部内容：给出 start 时 old 必须是整行；"
        "若只替换这段文本，请不要传 start",
    ),
    "mismatch_lines_part.hint.cli": (
        "--old stands inside lines {start}-{end} but is not their whole text: with --start, --old must "
        "be the whole lines; leave --start out to replace just that text",
        "--old 位于第 {start}-{end} 行之内，但不是这些行的全部内容：给出 --start 时 --old 必须是整行；"
        "若只替换这段文本，请不要传 --start",
    ),
    "mismatch_lines_inside.hint": (
        "old stands {count} times inside lines {start}-{end} but is not their whole text: with start, "
        "old must be the whole lines",
        "old 在第 {start}-{end} 行之内出现 {count} 次，但不是这些行的全部内容：给出 start 时 old 必须是整行",
    ),
    "mismatch_lines_inside.hint.cli": (
        "--old stands {count} times inside lines {start}-{end} but is not their whole text: with --start, "
        "--old must be the whole lines",
        "--old 在第 {start}-{end} 行之内出现 {count} 次，但不是这些行的全部内容：给出 --start 时 --old 必须是整行",
    ),
    "mismatch_lines_longer.hint": (
        "old is lines {start}-{last}, which run past lines {start}-{end}: pass end {last}, or leave start out",
        "old 是第 {start}-{last} 行，超出了第 {start}-{end} 行：请传入 end {last}，或不要传 start",
    ),
    "mismatch_lines_longer.hint.cli": (
        "--old is lines {start}-{last}, which run past lines {start}-{end}: pass --end {last}, or leave "
        "--start out",
        "--old 是第 {start}-{last} 行，超出了第 {start}-{end} 行：请传入 --end {last}，或不要传 --start",
    ),
    "mismatch_lines_closest.hint": (
        "see 'actual'; old occurs nowhere in the file, and 'closest' is the block most like it",
        "参见 actual；old 在文件中没有出现，closest 是与之最相似的块",
    ),
    "mismatch_lines_nowhere.hint": (
        "see 'actual'; old occurs nowhere in the file and nothing is like it: read the file again",
        "参见 actual；old 在文件中没有出现，也没有相似的块：请重新读取文件",
    ),
    "mismatch_in_place": (
        "the text at lines {start}-{end} of {file} is not the given old text, yet its line {text} "
        "still stands at line {at}: those lines were changed since old was copied from them",
        "{file} 第 {start}-{end} 行的内容与 old 不一致，但其中的行 {text} 仍在第 {at} 行："
        "这些行在复制 old 之后已被修改",
    ),
    "mismatch_in_place.hint": (
        "see 'actual' for those lines now and make old from them; a copy of old elsewhere is other code",
        "参见 actual 中这些行的现状，并据此重写 old；别处与 old 相同的内容是另一段代码",
    ),
    "mismatch_in_place.hint.cli": (
        "see actual: for those lines now and make --old from them; a copy of old elsewhere is other code",
        "参见 actual: 中这些行的现状，并据此重写 --old；别处与 old 相同的内容是另一段代码",
    ),
    "mismatch_none": ("old was not found in {file}", "在 {file} 中找不到 old"),
    "content_relative_indent": (
        "content's first line goes after the indentation of line {line} of {file} (old begins there), "
        "but its line {content_line} is indented less than that line: indentation gives {file} its "
        "meaning, and written as given that line would leave the block line {line} is in",
        "content 的第一行接在 {file} 第 {line} 行的缩进之后（old 从那里开始），但其第 {content_line} 行的缩进"
        "比该行少：{file} 的含义取决于缩进，按原样写入，该行会离开第 {line} 行所在的代码块",
    ),
    "content_relative_indent.hint": (
        "send old from the start of its line, with its indentation, and each line of content with its "
        "whole indentation; or pass {force} to write content as given",
        "请从行首开始发送 old（带缩进），并让 content 的每一行都带完整的缩进；若确要按原样写入请传 {force}",
    ),
    "content_relative_indent.hint.cli": (
        "send --old from the start of its line, with its indentation, and each line of content with its "
        "whole indentation; or pass --force to write content as given",
        "请从行首开始发送 --old（带缩进），并让 content 的每一行都带完整的缩进；若确要按原样写入请加 --force",
    ),
    "old_in_word": (
        "old cuts a word at line {line} of {file}: it has {ours!r} where the file has {word!r}",
        "old 在 {file} 第 {line} 行截断了一个词：old 中为 {ours!r}，文件中是 {word!r}",
    ),
    "old_in_word.hint": (
        "make old start and end where words do (send the whole word), or pass {force} to change "
        "part of a word",
        "请让 old 在词的边界开始和结束（发送整个词），若确要修改词的一部分请传 {force}",
    ),
    "old_in_word.hint.cli": (
        "make --old start and end where words do (send the whole word), or pass --force to change "
        "part of a word",
        "请让 --old 在词的边界开始和结束（发送整个词），若确要修改词的一部分请加 --force",
    ),
    "placeholder": (
        "content line {line} looks like a placeholder for code that is kept: {text!r}; writing it would "
        "delete what it stands for",
        "content 第 {line} 行看起来是代替原有代码的占位行：{text!r}；写入它会删除它所代表的代码",
    ),
    "placeholder_insert": (
        "content line {line} looks like a placeholder for code that is kept: {text!r}; inserting it "
        "would add that line, not the code it stands for",
        "content 第 {line} 行看起来是代替原有代码的占位行：{text!r}；插入它只会加入这一行，而不是它所代表的代码",
    ),
    "content_fenced": (
        "content is wrapped in a Markdown code fence ({first!r} on its line 1, {closing!r} on its line "
        "{last}): those lines would be written into {file}",
        "content 被 Markdown 代码围栏包裹（第 1 行 {first!r}，第 {last} 行 {closing!r}）：这些行会被写入 {file}",
    ),
    "content_fenced.hint": (
        "send the text without the fence lines; or pass {force} if {file} is to hold them",
        "请发送不含围栏行的文本；若 {file} 确实需要这些行请传 {force}",
    ),
    "content_fenced.hint.cli": (
        "send the text without the fence lines; or pass --force if {file} is to hold them",
        "请发送不含围栏行的文本；若 {file} 确实需要这些行请加 --force",
    ),
    "content_body_only": (
        "content starts indented deeper than line {start} of {file}, {first}, the first line of the "
        "function the target names (lines {start}-{end}): it would replace the whole function with a body",
        "content 的缩进比 {file} 第 {start} 行 {first} 更深，而这一行是目标所指函数（第 {start}-{end} 行）的第一行："
        "它会用函数体替换整个函数",
    ),
    "content_body_only.hint": (
        "send the whole function from its line {start}, or replace the lines of its body alone by their "
        "start and end; or pass {force} to write content as given",
        "请从第 {start} 行起发送整个函数，或按行号（start 与 end）只替换函数体的那些行；若确要按原样写入请传 {force}",
    ),
    "content_body_only.hint.cli": (
        "send the whole function from its line {start}, or replace the lines of its body alone with "
        "--start and --end; or pass --force to write content as given",
        "请从第 {start} 行起发送整个函数，或用 --start 与 --end 只替换函数体的那些行；若确要按原样写入请加 --force",
    ),
    "content_fence_end": (
        "content ends with {closing!r} (its line {last}), the closing line of a Markdown fence whose "
        "opening line is not there: it would be written into {file}",
        "content 以 {closing!r}（第 {last} 行）结尾，这是 Markdown 围栏的结束行，而开始行不在其中：它会被写入 {file}",
    ),
    "content_fence_end.hint": (
        "send the text without that line; or pass {force} if {file} is to hold it",
        "请发送不含该行的文本；若 {file} 确实需要这一行请传 {force}",
    ),
    "content_fence_end.hint.cli": (
        "send the text without that line; or pass --force if {file} is to hold it",
        "请发送不含该行的文本；若 {file} 确实需要这一行请加 --force",
    ),
    "content_markers": (
        "content holds the markers of a SEARCH/REPLACE block or a merge conflict ({marker!r}, =======, "
        ">>>>>>>): they would be written into {file}",
        "content 含有 SEARCH/REPLACE 块或合并冲突的标记（{marker!r}、=======、>>>>>>>）：它们会被写入 {file}",
    ),
    "content_markers.hint": (
        "send the new text itself (for a SEARCH/REPLACE block: its REPLACE part as content, its SEARCH "
        "part as old); or pass {force} if {file} is to hold the markers",
        "请发送新文本本身（SEARCH/REPLACE 块：其 REPLACE 部分作为 content，SEARCH 部分作为 old）；"
        "若 {file} 确实需要这些标记请传 {force}",
    ),
    "content_markers.hint.cli": (
        "send the new text itself (for a SEARCH/REPLACE block: its REPLACE part with -c, its SEARCH part "
        "with --old); or pass --force if {file} is to hold the markers",
        "请发送新文本本身（SEARCH/REPLACE 块：REPLACE 部分用 -c，SEARCH 部分用 --old）；若 {file} 确实需要这些标记请加 --force",
    ),
    "content_prefixed": (
        "every line of content starts with the line-number prefix of a read ({first}<TAB> to "
        "{last}<TAB>): those numbers would be written into {file}",
        "content 的每一行都以读取结果的行号前缀开头（{first}<TAB> 到 {last}<TAB>）：这些行号会被写入 {file}",
    ),
    "content_prefixed.hint": (
        "send the lines without their N<TAB> prefixes; or pass {force} if {file} is to hold them",
        "请发送去掉 N<TAB> 前缀的行；若 {file} 确实需要这些前缀请传 {force}",
    ),
    "content_prefixed.hint.cli": (
        "send the lines without their N<TAB> prefixes; or pass --force if {file} is to hold them",
        "请发送去掉 N<TAB> 前缀的行；若 {file} 确实需要这些前缀请加 --force",
    ),
    "content_diff": (
        "content is a diff (its lines start with '+', '-' or a space, and its '-' lines stand in "
        "{file}): its signs would be written into {file}",
        "content 是一个 diff（各行以 '+'、'-' 或空格开头，且其 '-' 行在 {file} 中）：这些符号会被写入 {file}",
    ),
    "content_diff.hint": (
        "send the new text itself, or the diff as {edit}'s `patch`; or pass {force} if {file} is to "
        "hold those lines",
        "请发送新文本本身，或把 diff 作为 {edit} 的 `patch` 发送；若 {file} 确实需要这些行请传 {force}",
    ),
    "content_diff.hint.cli": (
        "send the new text itself, or the diff to the `patch` command; or pass --force if {file} is to "
        "hold those lines",
        "请发送新文本本身，或用 `patch` 命令应用该 diff；若 {file} 确实需要这些行请加 --force",
    ),
    "cut_line": (
        "content line {line} is built from a replaced line of {length} characters but lacks its end: built "
        "from a read that showed that line cut, it would delete the part not shown",
        "content 第 {line} 行由被替换的一行（{length} 个字符）构成却缺少其结尾：它来自截断显示该行的读取，"
        "写入会删除未显示的部分",
    ),
    "cut_line.hint": (
        "replace by old with only the part you change, or read the line whole (max_lines 0) and send "
        "all of it; pass {force} if the line is meant to end there",
        "请用 old 只替换要改的部分，或以 max_lines 0 读取整行后完整发送；若该行确应到此结束，请传 {force}",
    ),
    "cut_line.hint.cli": (
        "replace by --old with only the part you change, or read the line whole (--max-lines 0) and "
        "send all of it; pass --force if the line is meant to end there",
        "请用 --old 只替换要改的部分，或以 --max-lines 0 读取整行后完整发送；若该行确应到此结束，请加 --force",
    ),
    "placeholder.hint": (
        "send the real lines instead of the placeholder (edit a smaller range to keep the rest), or pass "
        "{force} if the line is meant literally",
        "请发送真实的代码行而不是占位行（缩小编辑范围以保留其余部分），若该行确为原文请传 {force}",
    ),
    "placeholder.hint.cli": (
        "send the real lines instead of the placeholder (edit a smaller range to keep the rest), or pass "
        "--force if the line is meant literally",
        "请发送真实的代码行而不是占位行（缩小编辑范围以保留其余部分），若该行确为原文请加 --force",
    ),
    "mismatch_closest.hint": (
        "see 'closest': the most similar block, its first difference and a viewed_code_id to retry with",
        "参见 closest：最相似的块、第一处差异，以及可用于重试的 viewed_code_id",
    ),
    "mismatch_closest_twins.hint": (
        "see 'closest': the most similar block and its first difference; that block stands at several "
        "places, so give start and end to say which one you mean",
        "参见 closest：最相似的块及其第一处差异；该块在多处出现，请给出 start 和 end 指明是哪一处",
    ),
    "mismatch_closest_twins.hint.cli": (
        "see closest: the most similar block and its first difference; that block stands at several "
        "places, so give -s and -e to say which one you mean",
        "参见 closest：最相似的块及其第一处差异；该块在多处出现，请用 -s 和 -e 指明是哪一处",
    ),
    "mismatch_none_nohint.hint": (
        "read the file to see its current text",
        "请读取文件查看当前内容",
    ),
    "ambiguous": (
        "old occurs {count} times in {file} (lines {where})",
        "old 在 {file} 中出现 {count} 次（第 {where} 行）",
    ),
    "ambiguous.hint": (
        "add surrounding lines to old, or pass start/end",
        "请在 old 中加入上下文行，或传入 start/end",
    ),
    "ambiguous.hint.cli": (
        "add surrounding lines to --old, or pass --start/--end",
        "请在 --old 中加入上下文行，或传入 --start/--end",
    ),
    "ambiguous_prefixed": (
        "old still had the line-number prefixes of a read, naming lines {start}-{end}, but its text "
        "stands {count} times in {file} (lines {where}): numbers from a read made before an edit "
        "may name another copy",
        "old 仍带着读取结果的行号前缀（指向第 {start}-{end} 行），但其文本在 {file} 中出现 {count} 次"
        "（第 {where} 行）：编辑之前读取的行号可能指向另一份副本",
    ),
    "ambiguous_prefixed.hint": (
        "pass the viewed_code_id of the read those lines come from, or start/end of the place meant",
        "请传入这些行所来自的那次读取的 viewed_code_id，或传入目标位置的 start/end",
    ),
    "ambiguous_prefixed.hint.cli": (
        "pass --viewed-code-id of the read those lines come from, or --start/--end of the place meant",
        "请传入这些行所来自的那次读取的 --viewed-code-id，或传入目标位置的 --start/--end",
    ),
    "marker_ambiguous": (
        "marker {value!r} occurs on {count} lines of {file} ({where})",
        "标记 {value!r} 在 {file} 中出现于 {count} 行（{where}）",
    ),
    "function_ambiguous": (
        "function {value!r} is defined {count} times in {file} (lines {where})",
        "函数 {value!r} 在 {file} 中定义了 {count} 次（第 {where} 行）",
    ),
    "marker_ambiguous.hint": (
        "add occurrence N to the target to pick one",
        "请在 target 中加入 occurrence N 指定其一",
    ),
    "marker_ambiguous.hint.cli": (
        "add --occurrence N to pick one",
        "请加 --occurrence N 指定其一",
    ),
    "target_missing": (
        "{kind} {value!r} not found in {file}",
        "在 {file} 中找不到 {kind} {value!r}",
    ),
    "target_no_lines": (
        "function {value!r} is defined at line {line} of {file}, but that line holds more: the function "
        "whose lines it is in is {other}, and a target names whole lines",
        "函数 {value!r} 定义在 {file} 第 {line} 行，但该行还包含其他代码：该行所在函数的范围是 {other}，而目标指的是整行",
    ),
    "target_shared_line": (
        "function {value!r} is defined at line {line} of {file}, which also defines {other}: a target "
        "names whole lines, and that line holds them too",
        "函数 {value!r} 定义在 {file} 第 {line} 行，该行还定义了 {other}：目标指的是整行，而该行也包含它们",
    ),
    "tag_shared_line": (
        "the element <{value}> at line {line} of {file} shares its lines with other text: a target names "
        "whole lines, and those hold more than the element",
        "{file} 第 {line} 行的元素 <{value}> 与其他文本共用所在行：目标指的是整行，而这些行不只包含该元素",
    ),
    "tag_shared_line.hint": (
        "edit it by old (its text, read first) or by line numbers",
        "请用 old（先读取其文本）或按行号编辑它",
    ),
    "tag_shared_line.hint.cli": (
        "edit it by --old (its text, read first) or by --start/--end",
        "请用 --old（先读取其文本）或按 --start/--end 编辑它",
    ),
    "target_shared_line.hint": (
        "edit that line by number or by old (read it first)",
        "请按行号或 old 编辑该行（先读取它）",
    ),
    "target_shared_line.hint.cli": (
        "edit that line by number (--start) or by --old (read it first)",
        "请按行号（--start）或 --old 编辑该行（先读取它）",
    ),
    "target_no_lines.hint": (
        "edit those lines by number or by old (read them first)",
        "请按行号或 old 编辑这些行（先读取它们）",
    ),
    "target_no_lines.hint.cli": (
        "edit those lines by number (--start, --end) or by --old (read them first)",
        "请按行号（--start、--end）或 --old 编辑这些行（先读取它们）",
    ),
    "tag_unclosed": (
        "the element <{value}> that opens at line {line} of {file} has no end tag: it has no range",
        "{file} 第 {line} 行开始的元素 <{value}> 没有结束标签：它没有范围",
    ),
    "tag_unclosed.hint": (
        "name its lines by number (read it first), or pick another with occurrence",
        "请用行号指定这些行（先读取），或用 occurrence 选择另一个",
    ),
    "tag_unclosed.hint.cli": (
        "name its lines by number (read it first), or pick another with --occurrence",
        "请用行号指定这些行（先读取），或用 --occurrence 选择另一个",
    ),
    "target_missing.hint": (
        "the {kind}s in the file, nearest first: {nearest}",
        "文件中的 {kind}，最接近的在前：{nearest}",
    ),
    "target_none.hint": ("the file holds no named {kind}", "文件中没有带名称的 {kind}"),
    "occurrence_range": (
        "occurrence {value} is out of range: {kind} {target!r} occurs {count} time(s)",
        "occurrence {value} 超出范围：{kind} {target!r} 出现 {count} 次",
    ),
    "view_bad": (
        "viewed_code_id {id} is not a token from read (expected v1:START-END:HASH)",
        "viewed_code_id {id} 不是 read 返回的令牌（应为 v1:START-END:HASH）",
    ),
    "view_bad.hint": (
        "pass the viewed_code_id that read returned, or leave the argument out",
        "请传入 read 返回的 viewed_code_id，或不传该参数",
    ),
    "view_bad.hint.cli": (
        "pass the --viewed-code-id that read printed, or leave the option out",
        "请传入 read 输出的 --viewed-code-id，或不加该选项",
    ),
    "changed_while_read": (
        "{file} changed while it was read (it is read in two passes, its size or time changed between them)",
        "{file} 在读取过程中被修改（分两遍读取，两遍之间其大小或时间发生了变化）",
    ),
    "changed_while_read.hint": ("read it again", "请重新读取"),
    "stale_view": (
        "{file} changed since lines {start}-{end} were read (viewed_code_id {id})",
        "自读取第 {start}-{end} 行以来 {file} 已被修改（viewed_code_id {id}）",
    ),
    "stale_view_unseen": (
        "{file} changed since lines {start}-{end} were read (viewed_code_id {id}) where a read does not "
        "show it: their text is the same, but a line ending, the final newline or the bytes around them "
        "changed",
        "自读取第 {start}-{end} 行以来 {file} 在读取结果看不到之处被修改（viewed_code_id {id}）：这些行的文本相同，"
        "但换行符、末尾换行或其周围的字节变了",
    ),
    "stale_view_empty": (
        "{file} changed since it was read empty (viewed_code_id {id}): it has {total} line(s) now",
        "{file} 自读取时为空以来已被修改（viewed_code_id {id}）：现在有 {total} 行",
    ),
    "stale_view_other_file": (
        "{file} is not the file lines {start}-{end} were read from (viewed_code_id {id}): that read was "
        "of {other}",
        "{file} 不是读取第 {start}-{end} 行时的那个文件（viewed_code_id {id}）：那次读取的是 {other}",
    ),
    "stale_view_other_file.hint": (
        "a viewed_code_id holds only for the file it was read from (a name that now leads to another "
        "file is another file): read this file and use the viewed_code_id of that read",
        "viewed_code_id 只对读取它的那个文件有效（现在指向另一个文件的名字即是另一个文件）：请读取此文件并使用该次读取的 viewed_code_id",
    ),
    "view_moved_past": (
        "lines {start}-{end} of {file} moved since they were read (viewed_code_id {id}), and the edit "
        "reaches past them: only an edit inside lines that moved follows them",
        "{file} 的第 {start}-{end} 行自读取以来已移动（viewed_code_id {id}），而本次编辑超出了这些行：只有在移动的行之内的编辑才会跟随它们",
    ),
    "view_end_moved": (
        "{file} changed since lines {start}-{end} were read (viewed_code_id {id}): lines were added or "
        "removed below them, so a line counted from the end of the file is not the one it was then",
        "自读取第 {start}-{end} 行以来 {file} 已被修改（viewed_code_id {id}）：其下方有行被增删，"
        "从文件末尾倒数的行已不是当时那一行",
    ),
    "view_shifted": (
        "{file} changed since lines {start}-{end} were read (viewed_code_id {id}): they still stand "
        "there, but the same lines stand elsewhere too, and with lines added or removed above or "
        "around them, these may be another copy",
        "自读取第 {start}-{end} 行以来 {file} 已被修改（viewed_code_id {id}）：这些行仍在原处，但别处也有相同的行，"
        "且其上方或周围有行被增删，这里可能是另一份副本",
    ),
    "view_reordered": (
        "{file} changed since lines {start}-{end} were read (viewed_code_id {id}): they still stand "
        "there, but the same lines stand elsewhere too, and the lines around them are no longer those "
        "read: blocks moved or swapped may have put another copy there",
        "自读取第 {start}-{end} 行以来 {file} 已被修改（viewed_code_id {id}）：这些行仍在原处，但别处也有相同的行，"
        "且其周围的行已不是读取时的那些：代码块被移动或交换后，这里可能是另一份副本",
    ),
    "view_replaced": (
        "{file} changed since lines {start}-{end} were read (viewed_code_id {id}): they still stand "
        "there, but the lines around them are others now, and the line above them then stands {moved} "
        "lines from there: these may be a copy put in their place",
        "自读取第 {start}-{end} 行以来 {file} 已被修改（viewed_code_id {id}）：这些行仍在原处，但其周围的行已不同，"
        "而当时其上方的那一行如今移动了 {moved} 行：这里可能是放到原处的一份副本",
    ),
    "view_copied": (
        "{file} changed since lines {start}-{end} were read (viewed_code_id {id}): they still stand "
        "there, but so they do elsewhere now, and lines added above may have moved yours onto that copy",
        "自读取第 {start}-{end} 行以来 {file} 已被修改（viewed_code_id {id}）：这些行仍在原处，"
        "但别处现在也有相同的一份，上方新增的行可能已把你读到的那份移到别处",
    ),
    "stale_view.hint": (
        "see 'current'; read again and redo the edit on the current text (a viewed_code_id holds only for the file it was read from)",
        "参见 current；请重新读取并基于当前内容编辑（viewed_code_id 只对读取它的那个文件有效）",
    ),
    "unbalanced": (
        "lines {start}-{end} hold unbalanced {symbols}; deleting them would break the structure",
        "第 {start}-{end} 行含有不配对的 {symbols}；删除会破坏结构",
    ),
    "unbalanced.hint": (
        "widen the range to whole blocks ({func_range} helps), or pass {force}",
        "请把范围扩大到完整的代码块（可用 {func_range}），或传入 {force}",
    ),
    "unbalanced.hint.cli": (
        "widen the range to whole blocks ({func_range} helps), or pass --force",
        "请把范围扩大到完整的代码块（可用 {func_range}），或加 --force",
    ),
    "no_function": (
        "no function, method or class encloses line {line} of {file}",
        "{file} 第 {line} 行不在任何函数、方法或类中",
    ),
    "no_tag": ("no element encloses line {line} of {file}", "{file} 第 {line} 行不在任何元素中"),
    "range.hint": ("try another line, or read the file", "请换一行或读取文件"),
    "not_checkable": (
        "{file}: the language is not known, so {what} cannot be found",
        "{file}：无法识别语言，无法查找{what}",
    ),
    "not_checkable.hint": (
        "the language is told by the file's name (its extension, or a name such as Makefile) or its "
        "first line (#!); read the file and give the lines by number",
        "语言由文件名（扩展名，或 Makefile 之类的文件名）或首行（#!）判断；请读取文件并按行号指定",
    ),
    "chip_missing": ("chip {id} not found", "找不到 chip {id}"),
    "chip_no_comments": (
        "{file} is JSON, which has no comments: an annotated chip would be no JSON any more",
        "{file} 是 JSON，没有注释语法：带注释的 chip 会使其不再是合法 JSON",
    ),
    "chip_no_comments.hint": (
        "insert the chip's text (as: text), or put the annotated chip into another file",
        "请插入 chip 的原文（as: text），或把带注释的 chip 放入其他文件",
    ),
    "chip_missing.hint": (
        "list chips with {insert_chip} and no arguments",
        "不带参数调用 {insert_chip} 可列出所有 chip",
    ),
    "chip_bad_from": (
        "from must be chip://ID or file:///path, got {got!r}",
        "from 应为 chip://ID 或 file:///path，实际为 {got!r}",
    ),
    "chip_bad_from_id.hint": (
        "a chip is named with its scheme: from chip://{id}",
        "chip 需带上其前缀：from 写作 chip://{id}",
    ),
    "chip_bad_to": (
        "to must be path:LINE or file:///path:LINE, got {got!r}",
        "to 应为 path:LINE 或 file:///path:LINE，实际为 {got!r}",
    ),
    "chip_no_text": (
        "chip {id} keeps no single text (tool {tool})",
        "chip {id} 没有可直接插入的文本（工具 {tool}）",
    ),
    "chip_file_empty": ("{file} is empty: there is nothing to insert", "{file} 是空文件：没有可插入的内容"),
    "chip_file_empty.hint": (
        "name a file that holds the text, or a chip://ID from the list of {insert_chip}",
        "请指定含有该文本的文件，或 {insert_chip} 列表中的 chip://ID",
    ),
    "chip_no_text.hint": ("insert it with as: annotated", "请使用 as: annotated 插入"),
    "to_without_from": ("to was given without from", "给出了 to 但没有 from"),
    "view_without_to": (
        "viewed_code_id was given without from and to: it checks the lines an insert goes after",
        "给出了 viewed_code_id 但没有 from 和 to：它用于检查插入位置所在的行",
    ),
    "snapshot_missing": ("no snapshot with event_id {event_id}", "没有 event_id 为 {event_id} 的快照"),
    "snapshot_missing.hint": ("list snapshots with {trx_status}", "可用 {trx_status} 查看快照"),
    "nothing_to_rollback": ("there is no snapshot to roll back{scope}", "没有可回滚的快照{scope}"),
    "snapshot_changed": (
        "the old bytes of {file} kept by event {event_id} were written since: a program that still had "
        "the old file open wrote into it, so they are no longer what {file} held; nothing was undone",
        "事件 {event_id} 保存的 {file} 旧内容在此后被改写：某个仍打开着旧文件的程序写入了它，因此它已不是 {file} "
        "当时的内容；未撤销任何内容",
    ),
    "snapshot_bytes_gone": (
        "the old bytes of {file} kept by event {event_id} are gone from the snapshot folder (removed "
        "since); nothing was undone",
        "事件 {event_id} 保存的 {file} 旧内容已不在快照文件夹中（此后被删除）；未撤销任何内容",
    ),
    "snapshot_changed.hint": (
        "read the file and restore what you need by hand; roll back other events with event_id",
        "请读取该文件并手动恢复所需内容；其他事件可用 event_id 回滚",
    ),
    "rollback_raced": (
        "event {event_id} went while this rollback waited for the lock of {file}: another rollback "
        "undid it, or a commit forgot it; nothing was undone",
        "本次回滚等待 {file} 的锁期间，事件 {event_id} 已不存在：另一次回滚撤销了它，或它已被提交遗忘；未撤销任何内容",
    ),
    "rollback_raced.hint": (
        "list the events with {trx_status} and roll back again",
        "请用 {trx_status} 列出事件后再回滚",
    ),
    "rollback_elsewhere": (
        "{file} now leads to {now} (a link was put in its place): a rollback would write that file "
        "instead; nothing was undone",
        "{file} 现在指向 {now}（原处被换成了链接）：回滚会改写那个文件；未撤销任何内容",
    ),
    "rollback_elsewhere.hint": (
        "remove the link and put the file back where it was, then roll back again",
        "请删除该链接并把文件放回原处，然后再回滚",
    ),
    "rollback_conflict": (
        "{file} no longer holds what event {event_id} wrote; nothing was rolled back",
        "{file} 已不是事件 {event_id} 写入后的内容；未回滚任何内容",
    ),
    "rollback_conflict.hint": (
        "read the file; pass force to overwrite its current content anyway",
        "请先读取文件；如确要覆盖当前内容，请传入 force",
    ),
    "rollback_gone": (
        "{file} is gone (deleted, or moved away with its folder) since event {event_id} wrote it; "
        "nothing was rolled back",
        "{file} 在事件 {event_id} 写入之后已不存在（被删除，或随其文件夹被移走）；未回滚任何内容",
    ),
    "rollback_not_file": (
        "{file} is no regular file now (a folder, a pipe or a device took its name since event "
        "{event_id}); nothing was rolled back",
        "{file} 现在不是普通文件（事件 {event_id} 之后，其名称被文件夹、管道或设备占用）；未回滚任何内容",
    ),
    "rollback_not_file.hint": (
        "move that away and roll back again (force cannot write a file over it)",
        "请把它移走后再回滚（force 也无法用文件覆盖它）",
    ),
    "rollback_gone_made.hint": (
        "event {event_id} created it: nothing of it is left to undo; pass force to roll back the "
        "rest of the event",
        "事件 {event_id} 创建了它：它已无可撤销；如要回滚该事件的其余部分，请传入 force",
    ),
    "rollback_gone.hint": (
        "put it back where it was, or pass force to make it again with its text from before the event",
        "请把它放回原处，或传入 force 以事件之前的内容重新创建它",
    ),
    "steps_and_event": ("give steps or event_id, not both", "steps 与 event_id 只能给一个"),
    "internal": ("internal error: {detail}", "内部错误：{detail}"),
    "internal.hint": (
        "this is a bug in better-edit-tools; the file was not changed unless the result said so",
        "这是 better-edit-tools 的缺陷；除非结果另有说明，文件未被修改",
    ),
    "type.integer": ("an integer", "整数"),
    "type.finite": ("a finite value (JSON has no NaN or Infinity)", "有限的值（JSON 没有 NaN 或 Infinity）"),
    "type.string": ("a string", "字符串"),
    "type.array": ("an array (or a JSON string holding one)", "数组（或内容为数组的 JSON 字符串）"),
    "arg_json": (
        "argument {name!r} is JSON text that does not parse ({problem}); send a valid JSON array",
        "参数 {name!r} 是无法解析的 JSON 文本（{problem}）；请发送有效的 JSON 数组",
    ),
    "type.boolean": ("true or false", "true 或 false"),
    "type.path": ("a non-empty path", "非空路径"),
    "rpc.not_object": ("expected a request object", "应为请求对象"),
    "rpc.batch": (
        "expected a request object; a batch (an array of them) is taken only under protocol version "
        "2025-03-26",
        "应为请求对象；批量请求（请求对象组成的数组）仅在协议版本 2025-03-26 下受理",
    ),
    "rpc.bad_id": (
        "id must be a string or integer and method a string",
        "id 必须是字符串或整数，method 必须是字符串",
    ),
    "rpc.bad_params": ("params must be an object", "params 必须是对象"),
    "rpc.bad_cursor": (
        "unknown cursor: the tool list comes in one page, with no nextCursor",
        "未知的 cursor：工具列表只有一页，没有 nextCursor",
    ),
    "rpc.bad_version": ('jsonrpc must be "2.0"', 'jsonrpc 必须是 "2.0"'),
    "rpc.too_deep": (
        "the message nests arrays and objects too deeply to be read (about 1000 levels; arguments may "
        "nest 64); nothing was done",
        "该消息中数组和对象的嵌套过深，无法读取（约 1000 层；arguments 最多嵌套 64 层）；未做任何操作",
    ),
    "rpc.no_method": ("method must be a string", "method 必须是字符串"),
    "args_too_deep": (
        "arguments nest arrays and objects more than {limit} levels deep",
        "arguments 中数组和对象的嵌套超过 {limit} 层",
    ),
    # --- warnings ---
    "w.clamped": (
        "end {end} is beyond the last line; read up to line {total}",
        "end {end} 超出最后一行；已读到第 {total} 行",
    ),
    "w.mixed_eol": (
        "the file has mixed line endings ({crlf} CRLF, {lf} LF); new lines use {dominant}",
        "文件混用换行符（CRLF {crlf} 个，LF {lf} 个）；新行使用 {dominant}",
    ),
    "w.no_final_newline": ("the file does not end with a newline", "文件末尾没有换行符"),
    "w.function_several": (
        "function {name!r} is defined {count} times (lines {where}); this is the first: add occurrence N "
        "to the target for another (an edit by this target is refused until it says which)",
        "函数 {name!r} 定义了 {count} 次（第 {where} 行）；这是第一个：在 target 中加 occurrence N 选择其他"
        "（按此 target 编辑时，不指明哪一个就会被拒绝）",
    ),
    "w.function_several.cli": (
        "function {name!r} is defined {count} times (lines {where}); this is the first: add --occurrence N "
        "for another (an edit by this target is refused until it says which)",
        "函数 {name!r} 定义了 {count} 次（第 {where} 行）；这是第一个：加 --occurrence N 选择其他"
        "（按此 target 编辑时，不指明哪一个就会被拒绝）",
    ),
    "w.cr_only": (
        "the file breaks its lines with CR alone (classic Mac OS), more often than with LF: here "
        "lines broken so are one; convert it to LF or CRLF (e.g. tr '\\r' '\\n') before editing lines",
        "文件多数行只用 CR 换行（经典 Mac OS）：在这里这些行算作一行；按行编辑前请先转换为 LF 或 CRLF（如 tr '\\r' '\\n'）",
    ),
    "cr_only_lines": (
        "{file} breaks its lines with CR alone (classic Mac OS), more often than with LF: here lines "
        "broken so are one, so an edit by line numbers would change several of them",
        "{file} 多数行只用 CR 换行（经典 Mac OS）：在这里这些行算作一行，按行号编辑会同时改动其中多行",
    ),
    "cr_only_lines.hint": (
        "convert its line breaks first (tr '\\r' '\\n' < FILE > NEW, then move NEW over FILE), or "
        "replace by old, which matches the text exactly",
        "请先转换换行符（tr '\\r' '\\n' < FILE > NEW，再用 NEW 替换 FILE），或按 old 替换（按原文精确匹配）",
    ),
    "cr_only_lines.hint.cli": (
        "convert its line breaks first (tr '\\r' '\\n' < FILE > NEW, then move NEW over FILE), or "
        "replace by --old, which matches the text exactly",
        "请先转换换行符（tr '\\r' '\\n' < FILE > NEW，再用 NEW 替换 FILE），或按 --old 替换（按原文精确匹配）",
    ),
    "w.unmatched_cut": (
        "unmatched lists the first {listed} of {found} problems (counts has every bracket)",
        "unmatched 只列出 {found} 个问题中的前 {listed} 个（counts 统计全部括号）",
    ),
    "w.pairs_cut": (
        "pairs lists the first {listed} of {found} pairs",
        "pairs 只列出 {found} 对中的前 {listed} 对",
    ),
    "w.truncated": (
        "output cut at {max_lines} lines; continue with start {next_start}",
        "输出已截断为 {max_lines} 行；请从 start {next_start} 继续",
    ),
    "w.diff_cut": (
        "diff lines cut to their first {chars} characters: {count}",
        "diff 中只显示前 {chars} 个字符的行：{count}",
    ),
    "w.diff_long": (
        "the diff of {file} shows its first {shown} of {lines} lines (the edit itself is whole; brief: true "
        "leaves the diff out)",
        "{file} 的 diff 只显示 {lines} 行中的前 {shown} 行（编辑本身是完整的；brief: true 可省略 diff）",
    ),
    "w.list_cut": (
        "{name} lists the first {listed} of {found}",
        "{name} 只列出 {found} 个中的前 {listed} 个",
    ),
    "w.lists_cut": (
        "{count} lists of places ({first} and the failed items after it) list {listed} of their {found}",
        "{count} 个位置列表（{first} 及其后失败的条目）只列出其 {found} 个中的 {listed} 个",
    ),
    "w.field_cut": (
        "{name} shows the first {shown} of its {length} characters",
        "{name} 只显示其 {length} 个字符中的前 {shown} 个",
    ),
    "w.truncated_chars": (
        "output cut at {chars} characters; continue with start {next_start}",
        "输出已截断为 {chars} 个字符；请从 start {next_start} 继续",
    ),
    "w.line_cut": (
        "line {line} has {length} characters: content shows the first {shown} (max_lines 0 shows it whole)",
        "第 {line} 行有 {length} 个字符：content 只显示前 {shown} 个（max_lines 为 0 时完整显示）",
    ),
    "w.whitespace_match": (
        "old matched only when trailing whitespace and line endings are ignored (lines {start}-{end})",
        "忽略行尾空白和换行符后 old 才匹配（第 {start}-{end} 行）",
    ),
    "w.sticky_folder": (
        "{path} is another user's file in a folder with the sticky bit (as /tmp), where it cannot be "
        "replaced: written in place",
        "{path} 是另一用户的文件，位于设置了粘滞位的文件夹（如 /tmp）中，无法被替换：已原地写入",
    ),
    "w.other_owner": (
        "{path} belongs to another user (uid {uid}), who would not own a new file replacing it: "
        "written in place, so it keeps its owner and group",
        "{path} 属于另一用户（uid {uid}），替换它的新文件将不归其所有：已原地写入，以保留其所有者和组",
    ),
    "w.mount_point": (
        "{path} is a mount point of its own (a file mounted into this folder): written in place",
        "{path} 自身是一个挂载点（挂载到此文件夹的文件）：已原地写入",
    ),
    "w.hardlinks_rooted": (
        "{path} has {count} hard links: written in place so they stay shared; their other names may "
        "lie outside the root (a package store's or a backup's), and they hold this change too",
        "{path} 有 {count} 个硬链接：已原地写入以保持共享；其他名称可能位于根目录之外（如包缓存或备份），它们也包含此次修改",
    ),
    "w.hardlinks": (
        "{path} has {count} hard links: written in place so they stay shared",
        "{path} 有 {count} 个硬链接：已原地写入以保持共享",
    ),
    "w.outside_view": (
        "the edited lines {start}-{end} are outside the viewed lines {vstart}-{vend}",
        "编辑的第 {start}-{end} 行不在已查看的第 {vstart}-{vend} 行内",
    ),
    "w.deleted_chip": ("deleted content saved as chip://{id}", "被删除的内容已保存为 chip://{id}"),
    "w.rescued": (
        "content looked double-escaped (literal \\n, no real newline): it was unescaped; the original is chip://{id}",
        "content 疑似被双重转义（只有字面 \\n，没有真正换行）：已还原；原文保存为 chip://{id}",
    ),
    "w.rescued_preview": (
        "content looked double-escaped (literal \\n, no real newline): it would be unescaped (preview: no chip saved)",
        "content 疑似被双重转义（只有字面 \\n，没有真正换行）：写入时将被还原（预览：未保存 chip）",
    ),
    "w.chip_evicted": (
        "oldest chip {id} was evicted (queue max {max})",
        "最旧的 chip {id} 已被移除（队列上限 {max}）",
    ),
    "w.chip_evicted_failed": (
        "the oldest chip kept from a failed call or a line that was not JSON, {id}, was evicted (queue "
        "max {max}, half of it held by such chips)",
        "chip {id}（失败调用或非 JSON 行的 chip 中最旧的一个）已被移除（队列上限 {max}，其中一半为此类 chip）",
    ),
    "w.chip_not_saved": ("could not save a chip: {detail}", "无法保存 chip：{detail}"),
    "w.snapshot_too_large": (
        "the old bytes of this change ({mib} MiB) are more than the snapshots may hold ({limit} MiB): "
        "they were not kept, and the change cannot be rolled back",
        "此次修改的旧内容（{mib} MiB）超过快照可保存的上限（{limit} MiB）：未被保存，此修改无法回滚",
    ),
    "w.snapshot_evicted": (
        "oldest snapshot {id} was dropped (limit {max} snapshots, {mib} MiB)",
        "最旧的快照 {id} 已被丢弃（上限 {max} 个、{mib} MiB）",
    ),
    "w.read_prefixes": (
        "old still had the line-number prefixes of a read; they named lines {start}-{end}, which hold "
        "that text, so the edit was applied there",
        "old 仍带着读取结果的行号前缀；它们指向的第 {start}-{end} 行正是该文本，已在此处修改",
    ),
    "w.indent_once": (
        "old began after the indentation of line {line}, and content's first line began with that "
        "indentation too: it was written once, not twice",
        "old 从第 {line} 行的缩进之后开始，而 content 的第一行也以该缩进开头：缩进只写入一次，而非两次",
    ),
    "w.indent_once_inside": (
        "old began inside the indentation of line {line}, and content's first line began with the "
        "line's whole indentation: it was written once, not partly twice",
        "old 从第 {line} 行的缩进中间开始，而 content 的第一行带有该行完整的缩进：缩进只写入一次，而非部分重复",
    ),
    "w.last_line_repeated": (
        "content's last line {text} is also line {line}, right after the replaced lines {start}-{end}: "
        "it now stands twice (was the range meant to end at line {line}?)",
        "content 的最后一行 {text} 也是第 {line} 行，紧接在被替换的第 {start}-{end} 行之后："
        "它现在出现了两次（范围是否本应结束于第 {line} 行？）",
    ),
    "w.first_line_repeated": (
        "content's first line {text} is also line {line}, right before the replaced lines {start}-{end}: "
        "it now stands twice (was the range meant to start at line {line}?)",
        "content 的第一行 {text} 也是第 {line} 行，紧挨在被替换的第 {start}-{end} 行之前："
        "它现在出现了两次（范围是否本应开始于第 {line} 行？）",
    ),
    "w.content_prefixes": (
        "content had the line-number prefixes of a read, numbered from line {start} as the lines it "
        "replaces: they were taken off",
        "content 带着读取结果的行号前缀，且从第 {start} 行起编号，与被替换的行一致：已去掉这些前缀",
    ),
    "w.read_prefixes_content": (
        "old and content still had the line-number prefixes of a read; they named lines {start}-{end}, "
        "which hold that text, so the edit was applied there, with content's prefixes taken off",
        "old 和 content 仍带着读取结果的行号前缀；它们指向的第 {start}-{end} 行正是该文本，已在此处修改，"
        "并去掉了 content 的前缀",
    ),
    "w.relocated": (
        "lines moved by {d} since your read: edited {a}-{b} instead of {old_a}-{old_b}",
        "自你读取以来这些行移动了 {d} 行：已编辑第 {a}-{b} 行而不是第 {old_a}-{old_b} 行",
    ),
    "w.indent_style": (
        "line {line} now indents with {theirs} where the lines around it indent with {ours}: check it "
        "(Python stops with TabError, make with a recipe line indented by spaces)",
        "第 {line} 行用{theirs}缩进，而周围的行用{ours}缩进：请检查（Python 会报 TabError，make 的规则行须用制表符缩进）",
    ),
    "indent.tabs": ("tabs", "制表符"),
    "indent.spaces": ("spaces", "空格"),
    "w.escaped_twice": (
        "content was written as one line holding {count} \\n sequences: if they were "
        "meant as line breaks, it was escaped twice; send it again with real newlines",
        "content 作为一行写入，其中有 {count} 处 \\n：若它们本应是换行，说明内容被转义了两次；请用真实换行重新发送",
    ),
    "w.escaped_twice.cli": (
        "content was written as one line holding {count} \\n sequences: if they were meant as line "
        "breaks, give real newlines ($'...' in bash, or --content-file - with a here-document)",
        "content 作为一行写入，其中有 {count} 处 \\n：若它们本应是换行，请给出真实换行（bash 中用 $'...'，"
        "或用 --content-file - 配合 here-document）",
    ),
    "w.created_near": (
        "{file} was created, yet {near} is there: if you meant that one, write to it instead and remove {file}",
        "已创建 {file}，但 {near} 已存在：若本意是它，请改为写入它并移除 {file}",
    ),
    "w.preview_refused": (
        "the edit itself would be refused: {message}",
        "真正的编辑会被拒绝：{message}",
    ),
    "w.created_near_preview": (
        "{file} would be created, yet {near} is there: if you meant that one, write to it instead",
        "将创建 {file}，但 {near} 已存在：若本意是它，请改为写入它",
    ),
    "w.unchanged": (
        "the file already holds this text: nothing was written",
        "文件已是该内容：未写入任何内容",
    ),
    "w.unchanged_files": (
        "the files already hold this text: nothing was written",
        "这些文件已是该内容：未写入任何内容",
    ),
    "w.patch_mode": (
        "{file}: the patch sets mode {mode}, which is not applied (a patch changes text only); use chmod",
        "{file}：补丁设置的权限 {mode} 未应用（补丁只改文本）；请用 chmod",
    ),
    "w.hunk_recounted": (
        "hunk {hunk} of {file}: the header counts {header}, the body has {old} and {new} lines: recounted",
        "{file} 的第 {hunk} 块：头部计数为 {header}，正文有 {old} 行旧内容和 {new} 行新内容：已按正文重新计数",
    ),
    "w.hunk_newline_only": (
        "hunk {hunk} of {file} changes only whether the file ends with a newline; edits keep that as "
        "the file has it: nothing to write for it",
        "{file} 的第 {hunk} 块只改变文件末尾是否有换行；编辑会保持文件原样：此块无需写入",
    ),
    "w.hunk_newline_kept": (
        "hunk {hunk} of {file} also changes whether the file ends with a newline, which edits keep "
        "as the file has it: that part of it was not applied",
        "{file} 的第 {hunk} 块还改变了文件末尾是否有换行，编辑会保持文件原样：这一部分未应用",
    ),
    "w.hunk_bom_kept": (
        "hunk {hunk} of {file} adds or removes the byte order mark at the start of the file, which edits "
        "keep as the file has it: that part of it was not applied",
        "{file} 的第 {hunk} 块在文件开头添加或删除字节顺序标记（BOM），编辑会保持文件原样：这一部分未应用",
    ),
    "w.hunk_maybe_twice": (
        "hunk {hunk} of {file} adds lines that stand right after line {line} already: if the patch "
        "was applied before, they now stand twice (a rollback of this change takes them out again)",
        "{file} 的第 {hunk} 块要添加的行已紧跟在第 {line} 行之后：若该补丁之前已应用过，这些行现在重复出现（回滚此次修改即可去掉）",
    ),
    "w.hunk_offset": (
        "hunk {hunk} of {file} applied at line {line} (offset {offset})",
        "{file} 的第 {hunk} 块应用于第 {line} 行（偏移 {offset}）",
    ),
    "w.hunk_whitespace": (
        "hunk {hunk} of {file} matched only when trailing whitespace is ignored",
        "{file} 的第 {hunk} 块仅在忽略行尾空白时匹配",
    ),
    "w.snapshots_evicted": (
        "{count} oldest snapshots were dropped ({first} to {last}; limit {max} snapshots, {mib} MiB)",
        "{count} 个最旧的快照已被丢弃（{first} 至 {last}；上限 {max} 个、{mib} MiB）",
    ),
    "w.scanner_error": (
        "the structure check failed ({detail}); balance was not checked - please report this",
        "结构检查出错（{detail}）；未检查括号平衡——请报告此问题",
    ),
    "w.snapshots_in_memory": (
        "snapshots are kept in this process's memory only since the cache failed ({detail}); restart "
        "the server once the cache works again",
        "自缓存出错（{detail}）以来，快照只保存在本进程内存中；缓存恢复后请重启服务器",
    ),
    "journal_in_place": (
        "{file} has other hard links, so it is written in place, and its old bytes must first be kept "
        "in the commit journal, which cannot be written ({detail}): nothing was changed",
        "{file} 有其他硬链接，因此需原地写入，其旧内容须先保存在提交日志中，但日志无法写入（{detail}）：未做任何修改",
    ),
    "journal_in_place.hint": (
        "free space in the cache folder, or set BETTER_EDIT_CACHE_DIR to a writable folder and call again",
        "请释放缓存文件夹的空间，或将 BETTER_EDIT_CACHE_DIR 设为可写的文件夹后重试",
    ),
    "w.journal_unusable": (
        "the commit record could not be kept ({detail}): were this process killed during the write, "
        "nothing would undo it",
        "无法保存提交记录（{detail}）：若本进程在写入时被强制终止，将无法撤销",
    ),
    "w.completed": (
        "an interrupted change of {count} file(s) (event {event_id}) had been written in full before it "
        "was interrupted: it stands",
        "一次被中断的变更（{count} 个文件，事件 {event_id}）在中断前已完整写入：保持不变",
    ),
    "w.rollback_completed": (
        "an interrupted rollback of event(s) {events} ({count} file(s)) had been written in full before "
        "it was interrupted: it stands",
        "一次被中断的回滚（事件 {events}，{count} 个文件）在中断前已完整写入：回滚有效，该事件已回滚",
    ),
    "w.rollback_undone": (
        "an interrupted rollback of event(s) {events} ({count} file(s)) was undone: those files hold what "
        "they held before it; roll back again if you still want to",
        "一次被中断的回滚（事件 {events}，{count} 个文件）已撤销：这些文件恢复为回滚前的内容；如仍需回滚请重新执行",
    ),
    "w.undone": (
        "an interrupted change of {count} file(s) (event {event_id}) was undone",
        "一次被中断的变更（{count} 个文件，事件 {event_id}）已撤销",
    ),
    "w.undone_partly": (
        "an interrupted change of {count} file(s) (event {event_id}) was undone, except: {left}",
        "一次被中断的变更（{count} 个文件，事件 {event_id}）已撤销，以下除外：{left}",
    ),
    "w.record_stays": (
        "an interrupted change (event {event_id}) is undone, but its commit record could not be removed "
        "({detail}): writes to its files are refused until it can be; make the cache folder {folder} writable",
        "一次被中断的变更（事件 {event_id}）已撤销，但其提交记录无法删除（{detail}）：在删除之前，对其文件的写入都会被拒绝；"
        "请让缓存目录 {folder} 可写",
    ),
    "record_stuck": (
        "{file} was put back after an interrupted change (event {event_id}), but that change's commit "
        "record could not be removed ({detail}); nothing was written",
        "{file} 已在一次被中断的变更（事件 {event_id}）后恢复，但该变更的提交记录无法删除（{detail}）；未写入任何内容",
    ),
    "record_stuck.hint": (
        "make the cache folder {folder} writable (or set BETTER_EDIT_CACHE_DIR to a writable folder), "
        "then call again: the next call removes the record first",
        "请让缓存目录 {folder} 可写（或把 BETTER_EDIT_CACHE_DIR 设为可写目录），再重试：下一次调用会先删除该记录",
    ),
    "w.recovery_failed": (
        "an interrupted change could not be undone yet ({detail}); the next call tries again",
        "一次被中断的变更暂时无法撤销（{detail}）；下一次调用会重试",
    ),
    "recovery_stuck": (
        "{file} is part of an interrupted change that could not be undone yet ({detail}); nothing was "
        "written",
        "{file} 属于一次被中断且暂时无法撤销的变更（{detail}）；未写入任何内容",
    ),
    "recovery_stuck.hint": (
        "fix what the detail names (free descriptors, space or permissions), then call again: the next "
        "call undoes that change first",
        "请先解决上述问题（文件描述符、磁盘空间或权限），再重试：下一次调用会先撤销那次变更",
    ),
    "w.snapshot_not_saved": (
        "the snapshot was not persisted ({detail}); this edit cannot be rolled back by another process",
        "快照未能持久化（{detail}）；其他进程无法回滚本次编辑",
    ),
    "w.rollback_elsewhere": (
        "event {event_id} ({summary}) was not made by this server process (a CLI command, another "
        "server in this workspace, or this one before it restarted): it is undone too; if that was "
        "not meant, tell its author",
        "事件 {event_id}（{summary}）不是由本服务器进程做出（而是 CLI 命令、此工作区的另一个服务器，或重启前的本服务器）："
        "它也已被撤销；若非本意，请告知其作者",
    ),
    "w.snapshot_lost": (
        "the snapshot was not persisted ({detail}); this edit has no snapshot and cannot be rolled back",
        "快照未能持久化（{detail}）；本次编辑没有快照，无法回滚",
    ),
    "w.not_checked_delete": (
        "the language of {file} is not known: the deleted range was not checked for balance",
        "无法识别 {file} 的语言：未检查删除范围的括号配对",
    ),
    "w.diff_omitted": (
        "the diff was omitted: {lines} lines is more than {limit}",
        "差异过长（{lines} 行，超过 {limit} 行），已省略",
    ),
    "w.store_skipped": (
        "skipped unreadable store file {path}: {detail}",
        "跳过无法读取的存储文件 {path}：{detail}",
    ),
    "w.forced_unbalanced": (
        "forced: the deleted lines held unbalanced {symbols}",
        "已强制删除：被删除的行含有不配对的 {symbols}",
    ),
    "w.auto_window": (
        "no enclosing function for line {line}: showing a window around it",
        "第 {line} 行不在函数内：显示其附近的行",
    ),
    "w.rollback_kept": (
        "what the forced rollback overwrote is kept as event {event_id}: roll that event back to "
        "bring it back",
        "强制回滚所覆盖的内容已保存为事件 {event_id}：回滚该事件即可恢复",
    ),
    "w.rollback_forced": (
        "forced: {file} did not hold what event {event_id} wrote; its current content was overwritten",
        "已强制：{file} 不是事件 {event_id} 写入后的内容；当前内容已被覆盖",
    ),
    "w.rollback_forced_gone": (
        "forced: {file} was gone, not as event {event_id} left it; it was made again with its text "
        "before that event",
        "已强制：{file} 已不存在，并非事件 {event_id} 留下的状态；已按该事件之前的内容重新创建",
    ),
    "w.rollback_deleted": (
        "event {event_id} created {file}: the file was deleted",
        "事件 {event_id} 创建了 {file}：已删除该文件",
    ),
    # --- balance sentences (docs/behaviour.md#the-post-edit-balance-check) ---
    "b.ok": ("ok", "ok"),
    "b.not_checked": ("not checked", "not checked"),
    "b.broke": ("edit left {items}", "编辑导致 {items}"),
    "b.unclosed": (
        '{count} unclosed "{symbol}" (line {line})',
        '{count} 个未闭合的 "{symbol}"（第 {line} 行）',
    ),
    "b.unexpected": (
        '{count} unexpected "{symbol}" (line {line})',
        '{count} 个多余的 "{symbol}"（第 {line} 行）',
    ),
    "b.mismatched": (
        '{count} mismatched "{symbol}" (line {line})',
        '{count} 个不匹配的 "{symbol}"（第 {line} 行）',
    ),
    "b.reason_unknown": (
        "unknown language for {name}: no tokenizer for this file type",
        "{name} 的语言未知：没有适用于此类文件的分析器",
    ),
    # --- CLI text ---
    "cli.description": (
        "Exact, atomic, recoverable file edits. With a COMMAND: one operation (the CLI). "
        "Without: an MCP server on stdin/stdout.",
        "精确、原子、可恢复的文件编辑。带 COMMAND 时执行一次操作（命令行）；不带时作为 MCP 服务器运行于 stdin/stdout。",
    ),
    "cli.epilog": (
        "Run `better-edit-tools COMMAND --help` for a command's options and an example.\n"
        "The word right after a command is its file: `better-edit-tools read app.py -s 10 -e 30`.\n"
        "Every command takes -o json: its result, and any error, as JSON on stdout.\n"
        "Settings also come from BETTER_EDIT_* environment variables (docs/cli.md).",
        "运行 `better-edit-tools COMMAND --help` 查看命令的选项和示例。\n"
        "紧跟命令的词即其文件：`better-edit-tools read app.py -s 10 -e 30`。\n"
        "每个命令都接受 -o json：结果和错误都以 JSON 输出到 stdout。\n"
        "设置也可来自 BETTER_EDIT_* 环境变量（docs/cli.md）。",
    ),
    "cli.output_alone": (
        "-o goes with a command (better-edit-tools COMMAND ... -o json); with no command the program "
        "is the MCP server, which answers in JSON-RPC",
        "-o 需与命令一起使用（better-edit-tools COMMAND ... -o json）；不带命令时程序是 MCP 服务器，以 JSON-RPC 应答",
    ),
    "cli.bad_command_near": (
        "unknown command {word!r} (did you mean {near}?); valid commands: {commands}",
        "未知命令 {word!r}（是否想用 {near}？）；可用命令：{commands}",
    ),
    "cli.bad_command_undo": (
        "unknown command {word!r}: the command line has no undo; an MCP client undoes an event with the "
        "tool {rollback}; valid commands: {commands}",
        "未知命令 {word!r}：命令行没有撤销功能；MCP 客户端可用工具 {rollback} 撤销一次事件；可用命令：{commands}",
    ),
    "cli.bad_command": (
        "unknown command {word!r}; valid commands: {commands} (no command starts the MCP server)",
        "未知命令 {word!r}；可用命令：{commands}（不带命令则启动 MCP 服务器）",
    ),
    "cli.option_first": (
        "{option} {word} comes before the command {command}: its options go after it "
        "(better-edit-tools {command} ... {option} {word})",
        "{option} {word} 写在了命令 {command} 之前：命令的选项应写在命令之后（better-edit-tools {command} ... {option} {word}）",
    ),
    "cli.bad_env": ("invalid {name}={value!r}: {why}", "无效的 {name}={value!r}：{why}"),
    "cli.why_int": (
        "expected a whole number from {minimum} to 999999999999999",
        "应为 {minimum} 到 999999999999999 之间的整数",
    ),
    "cli.why_relative": (
        "a relative path; the folder would change with the working folder: give an absolute path",
        "这是相对路径；该文件夹会随工作文件夹变化：请给出绝对路径",
    ),
    "cli.why_empty_root": ("empty; name a folder or leave it out", "为空；请指定一个文件夹或不写此选项"),
    "cli.why_not_dir": ("not a directory", "不是文件夹"),
    "cli.why_bool": ("expected true or false", "应为 true 或 false"),
    "cli.lock_waiting": (
        "waiting up to {seconds} s for a lock another better-edit-tools process holds",
        "正在等待另一个 better-edit-tools 进程持有的锁（最多 {seconds} 秒）",
    ),
    "cli.output_escaped": (
        "warning: stdout's encoding ({encoding}) cannot hold some characters of this output: they are "
        "written as escapes (\\xe9), which cannot be told from the same text in the file; use -o json, "
        "or set PYTHONIOENCODING=utf-8",
        "警告：stdout 的编码（{encoding}）无法表示此输出中的某些字符：它们以转义形式（\\xe9）写出，"
        "与文件中相同的文字无法区分；请使用 -o json，或设置 PYTHONIOENCODING=utf-8",
    ),
    "cli.output_failed": (
        "error: the output could not be written to standard output: {detail}",
        "错误：无法把输出写到标准输出：{detail}",
    ),
    "cli.output_failed_edit": (
        "the edit was made, but its result could not be written to standard output: {detail}",
        "编辑已完成，但其结果无法写到标准输出：{detail}",
    ),
    "cli.no_cwd": (
        "the current folder no longer exists (removed or renamed since the shell entered it); "
        "cd to an existing folder and run again",
        "当前文件夹已不存在（进入后被删除或改名）；请 cd 到存在的文件夹后重试",
    ),
    "cli.both": ("give {option} or {other}, not both", "{option} 与 {other} 只能给一个"),
    "cli.exit_status": (
        "exit status:\n  0  done (also: nothing to change; what balance found)\n"
        "  1  failed or refused: nothing was changed\n  2  usage error or invalid argument",
        "退出状态：\n  0  完成（包括：无需更改；balance 的检查结果）\n  1  失败或被拒绝：未做任何更改\n  2  用法错误或参数无效",
    ),
    "cli.twice": (
        "{option} is given twice, with different values; give it once",
        "{option} 给出了两次且值不同；只能给一次",
    ),
    "cli.twice_as": (
        "{other} gives {option} again, with a different value; give the option once",
        "{other} 以不同的值再次给出了 {option}；该选项只能给一次",
    ),
    "cli.stdin_twice": (
        "{option} - and {other} - both name standard input; only one of them can read it",
        "{option} - 与 {other} - 都指向标准输入；只能有一个读取它",
    ),
    "cli.needs": ("{option} needs {other}", "{option} 需要与 {other} 一起使用"),
    "cli.required": ("{command} needs {options}", "{command} 需要 {options}"),
    "cli.prog_error": ("{prog}: error: {message}", "{prog}：错误：{message}"),
    "cli.one_dash": (
        "{arg}: a long option has two dashes, {option}; with one, its first letter is a short option and "
        "the rest its value",
        "{arg}：长选项要用两个短横线，即 {option}；只用一个时，首字母会被当作短选项，其余部分成了它的值",
    ),
    "cli.text_dash": (
        "{option} - would be the text '-': to read standard input, give {other} -; for the text '-', "
        "{option}=-",
        "{option} - 会是文本 '-'：要读取标准输入请用 {other} -；确要文本 '-' 请写 {option}=-",
    ),
    "cli.stray_word": (
        "{word} is no option: the file is the word right after the command ({prog} FILE ...) or -f FILE, "
        "one file a command; quote a value that holds spaces (-c 'new line')",
        "{word} 不是选项：文件应紧跟在命令之后（{prog} FILE ...）或用 -f FILE 给出，每条命令一个文件；含空格的值请加引号（-c 'new line'）",
    ),
    "cli.stray_number": (
        "{word} is no option: line numbers go with their options, as --start N and --end N (see {prog} --help)",
        "{word} 不是选项：行号须随其选项给出，如 --start N 与 --end N（见 {prog} --help）",
    ),
    "cli.file_word": (
        "name it right after the command ({prog} FILE ...), or with its option; - reads standard input where "
        "the option says so",
        "请紧跟在命令之后给出（{prog} FILE ...），或用其选项给出；选项说明支持时，- 表示读取标准输入",
    ),
    "cli.word_twice": (
        "{word}, the word after the command, and {option} {other} both name the file: name it once",
        "命令后的 {word} 与 {option} {other} 都指定了文件：只能指定一次",
    ),
    "cli.option_near": (
        "{option} is no option of this command: did you mean {near}?",
        "{option} 不是此命令的选项：是否指 {near}？",
    ),
    "cli.no_value": (
        "{option} needs a value after it: {option} VALUE (see {prog} --help)",
        "{option} 后面需要一个值：{option} VALUE（见 {prog} --help）",
    ),
    "cli.dash_value": (
        "a value that starts with '-' is written after '=': {option}=-x",
        "以 '-' 开头的值请写在 '=' 之后：{option}=-x",
    ),
    "cli.usage_hint": (
        "see `{prog} --help` for its options and examples",
        "运行 `{prog} --help` 查看其选项与示例",
    ),
    "cli.generic_summary": ("{file}: {status}", "{file}：{status}"),
    "cli.items_summary": (
        "{verb} {count_files} file(s), {count_items} item(s){event}",
        "{verb} {count_files} 个文件，{count_items} 个条目{event}",
    ),
    "cli.verb.edit": ("edited", "已编辑"),
    "cli.verb.patch": ("patched", "已打补丁"),
    # fixed, untranslated prefixes: scripts grep them (docs/cli.md)
    "cli.error": ("error[{code}]: {message}", "error[{code}]: {message}"),
    "cli.hint": ("hint: {hint}", "hint: {hint}"),
    "cli.warning": ("warning: {text}", "warning: {text}"),
    "cli.read_summary": (
        "{file}: lines {start}-{end} of {total} ({encoding}, {eol}) viewed_code_id={viewed_code_id}",
        "{file}：第 {start}-{end} 行，共 {total} 行（{encoding}，{eol}）viewed_code_id={viewed_code_id}",
    ),
    "cli.edit_summary": (
        "{verb} {file}: lines {start}-{end}, -{removed} +{added}, {total} lines now; balance: {balance}{event}",
        "{verb} {file}：第 {start}-{end} 行，删除 {removed} 行，新增 {added} 行，现共 {total} 行；配对检查：{balance}{event}",
    ),
    "cli.insert_summary": (
        "{verb} {file}: +{added} after line {after_line}, {total} lines now; balance: {balance}{event}",
        "{verb} {file}：在第 {after_line} 行后新增 {added} 行，现共 {total} 行；配对检查：{balance}{event}",
    ),
    "cli.write_summary": (
        "{verb} {file}: {lines} lines, {bytes} bytes{event}",
        "{verb} {file}：{lines} 行，{bytes} 字节{event}",
    ),
    "cli.balance_summary": ("{file} ({language}): {status}", "{file}（{language}）：{status}"),
    "cli.range_summary": ("{file}: lines {start}-{end} {what}", "{file}：第 {start}-{end} 行 {what}"),
    "cli.verb.preview": ("preview (nothing written) of", "预览（未写入）"),
    "cli.verb.unchanged": ("no change to", "未改动"),
    "cli.verb.replace": ("replaced in", "已替换"),
    "cli.verb.insert": ("inserted into", "已插入"),
    "cli.verb.delete": ("deleted from", "已删除"),
    "cli.verb.write_new": ("created", "已创建"),
    "cli.verb.write": ("wrote", "已写入"),
    "cli.event": (", event {event_id}", "，事件 {event_id}"),
    # --- server ---
    # details of an error in its text (error_details)
    "mismatch_words": ("; closest block: {words}", "；最相似的块：{words}"),
    "detail.closest": (
        "closest: lines {start}-{end} (similarity {similarity}, viewed_code_id {viewed_code_id}): {words}",
        "最相似：第 {start}-{end} 行（相似度 {similarity}，viewed_code_id {viewed_code_id}）：{words}",
    ),
    "detail.closest_twins": (
        "closest: lines {start}-{end} (similarity {similarity}; that block stands at several places): {words}",
        "最相似：第 {start}-{end} 行（相似度 {similarity}；该块在多处出现）：{words}",
    ),
    "detail.actual": ("actual:\n{text}", "实际内容：\n{text}"),
    "detail.found_at": ("old occurs at lines: {where}", "old 出现在第 {where} 行"),
    "detail.candidates": ("candidates: lines {where}", "候选：第 {where} 行"),
    "detail.changes": ("changes since your read:\n{text}", "自读取以来的变化：\n{text}"),
    "detail.now": ("the lines now:\n{text}", "这些行现在是：\n{text}"),
    "detail.item": ("item {index}: {code}: {message}", "条目 {index}：{code}：{message}"),
    # the first difference of a MISMATCH, in words (describe_difference)
    "diff.none": (
        "old matches the file here exactly (line endings aside)",
        "old 与该处内容完全一致（换行符除外）",
    ),
    "diff.at": ("line {line}, column {column}", "第 {line} 行第 {column} 列"),
    "diff.extra_blank": (
        "line {line}: the file has a blank line that old lacks",
        "第 {line} 行：文件有一个 old 中没有的空行",
    ),
    "diff.extra": (
        "line {line}: the file has a line old lacks: {text}",
        "第 {line} 行：文件多出 old 中没有的一行：{text}",
    ),
    "diff.missing_blank": (
        "line {line}: old has a blank line the file lacks",
        "第 {line} 行：old 有一个文件中没有的空行",
    ),
    "diff.missing": (
        "line {line}: old has a line the file lacks: {text}",
        "第 {line} 行：old 有一行是文件中没有的：{text}",
    ),
    "diff.line_numbers": (
        "line {line}: old still carries read line-number prefixes ({number}{sep}); remove them",
        "第 {line} 行：old 仍带有读取结果的行号前缀（{number}{sep}）；请删除",
    ),
    "diff.diff_prefixes": (
        "line {line}: old's lines still start with the ' ', '+' and '-' of a diff; send the file's lines "
        "without them (the ' ' and '-' lines are what the file holds before the change)",
        "第 {line} 行：old 的各行仍以 diff 的 ' '、'+'、'-' 开头；请发送不带这些前缀的文件原文（' ' 和 '-' 行是修改前的内容）",
    ),
    "diff.indent_none_old": (
        "{at}: old has no indentation, the file indents with {theirs}",
        "{at}：old 没有缩进，文件用 {theirs} 缩进",
    ),
    "diff.indent_none_file": (
        "{at}: old indents with {ours}, the file has no indentation",
        "{at}：old 用 {ours} 缩进，文件没有缩进",
    ),
    "diff.indent": (
        "{at}: old indents with {ours}, the file with {theirs}",
        "{at}：old 用 {ours} 缩进，文件用 {theirs}",
    ),
    "diff.blank_ws": (
        "{at}: old's blank line holds {ours}, the file's holds {theirs}",
        "{at}：old 的空行含 {ours}，文件的空行含 {theirs}",
    ),
    "diff.nothing": ("nothing", "无内容"),
    "diff.trail_old": (
        "{at}: old ends with {ours} of trailing whitespace the file lacks",
        "{at}：old 的行尾多出 {ours} 的空白，文件没有",
    ),
    "diff.trail_file": (
        "{at}: the file's line ends with {theirs} of trailing whitespace old lacks",
        "{at}：文件的行尾多出 {theirs} 的空白，old 没有",
    ),
    "diff.trail": (
        "{at}: old ends with {ours}, the file with {theirs}",
        "{at}：old 的行尾为 {ours}，文件的行尾为 {theirs}",
    ),
    "diff.has": (
        "{at}: old has {ours} where the file has {theirs}",
        "{at}：old 中是 {ours}，文件中是 {theirs}",
    ),
    "diff.escaped_old": (
        "{at}: old has the escape sequence {seq} where the file has {meant}; old looks double-escaped, "
        "send the text unescaped",
        "{at}：old 中是转义序列 {seq}，文件中是{meant}；old 似乎被双重转义，请发送未转义的文本",
    ),
    "diff.escaped_file": (
        "{at}: old has {meant} where the file has the escape sequence {seq}; write it escaped as the file does",
        "{at}：old 中是{meant}，文件中是转义序列 {seq}；请像文件一样写成转义形式",
    ),
    "diff.case": (
        "{at}: the case differs: old has {ours} where the file has {theirs}",
        "{at}：大小写不同：old 中是 {ours}，文件中是 {theirs}",
    ),
    "diff.old_ends": (
        "{at}: old's line ends where the file's continues with {theirs}",
        "{at}：old 的行在此结束，文件的行继续为 {theirs}",
    ),
    "diff.file_ends": (
        "{at}: old continues with {ours} where the file's line ends",
        "{at}：old 继续为 {ours}，文件的行在此结束",
    ),
    "diff.one.space": ("a space", "1 个空格"),
    "diff.many.space": ("{n} spaces", "{n} 个空格"),
    "diff.one.tab": ("a tab", "1 个制表符"),
    "diff.many.tab": ("{n} tabs", "{n} 个制表符"),
    "diff.one.char": ("a {char}", "1 个 {char}"),
    "diff.many.char": ("{n} {char}s", "{n} 个 {char}"),
    "diff.and": (" and ", "和"),
    "diff.comma": (", ", "、"),
    "diff.char.newline": ("a line break", "换行符"),
    "diff.char.tab": ("a tab", "制表符"),
    "diff.char.return": ("a carriage return", "回车符"),
    "diff.char.backslash": ("a single backslash", "单个反斜杠"),
    "diff.char.end": ("the end of the line", "行尾"),
    "diff.typo.old": ("a typographic {sort} {char}", "印刷体{sort} {char}"),
    "diff.typo.file": ("the typographic {sort} {char}", "印刷体{sort} {char}"),
    "diff.sort.quote": ("quote", "引号"),
    "diff.sort.dash": ("dash", "破折号"),
    "cli.balance_skipped": ("not checked (--brief)", "未检查（--brief）"),
    "cli.tty_input": (
        "{program}: reading {source} from the terminal; end it with Ctrl-D on a line of its own",
        "{program}：正在从终端读取 {source}；请在单独一行按 Ctrl-D 结束",
    ),
    "mcp.tty_notice": (
        "{program}: MCP server waiting for JSON-RPC messages on stdin (Ctrl-D ends it); "
        "for the command line, see {program} --help",
        "{program}：MCP 服务器正在等待标准输入上的 JSON-RPC 消息（Ctrl-D 结束）；命令行用法见 {program} --help",
    ),
    "mcp.instructions": (
        "better-edit-tools edits text files exactly: lines you do not name keep their bytes, every write is "
        "atomic and snapshotted. Read before you edit: {read} returns N<TAB>text lines and a viewed_code_id; "
        "pass it to the edit so a stale view is refused (lines that only moved are followed). Shared "
        "arguments: file (relative to the root, absolute or file:// URL); start/end (1-based, inclusive; "
        "negative end counts from the end); target ({{kind: line|function|marker|tag, value, occurrence}}, "
        'instead of start/end); content (new text, "" = no lines); viewed_code_id; encoding (files not '
        "UTF-8/16/32, e.g. gbk); preview (write nothing); brief (no content/diff/balance); format (unified or "
        'plain diff); force (apply despite a placeholder line such as "// ... existing code ..." or an '
        "unbalanced delete). Edit results return the viewed_code_id of the lines written. Several edits at "
        "once, all or nothing: {edit}. Undo: {trx_rollback}. Failed calls and deleted text are kept as "
        "chips: {insert_chip}. Errors give code, message, hint and data to fix the call.",
        "better-edit-tools 精确编辑文本文件：未指定的行保持原字节，每次写入都是原子的并有快照。先读后改：{read} 返回 "
        "N<TAB>文本 形式的行和 viewed_code_id；把它传给编辑，过期的视图会被拒绝（仅移动的行会被跟随）。公共参数："
        "file（相对根目录、绝对路径或 file:// URL）；start/end（从 1 开始，含两端；负数 end 从末尾倒数）；target"
        '（{{kind: line|function|marker|tag, value, occurrence}}，代替 start/end）；content（新文本，"" 表示无行）；'
        "viewed_code_id；encoding（非 UTF-8/16/32 的文件，如 gbk）；preview（不写入）；brief（不返回内容/diff/平衡）；"
        'format（unified 或 plain diff）；force（即使有 "// ... existing code ..." 之类的占位行或不配对的删除也执行）。'
        "编辑结果返回所写行的 viewed_code_id。多处编辑一次完成、全部成功或全不写入：{edit}。撤销：{trx_rollback}。"
        "失败调用和被删除的文本保存为 chip：{insert_chip}。错误包含 code、message、hint 及修正调用所需的数据。",
    ),
    "mcp.no_stdio": (
        "the MCP server reads requests on standard input and answers on standard output, and one of "
        "them is closed; start it with both connected",
        "MCP 服务器从标准输入读请求、向标准输出写应答，其中之一已关闭；请在两者都连接时启动",
    ),
    "mcp.unknown_tool": (
        "unknown tool {name!r}; closest: {closest}",
        "未知工具 {name!r}；最接近的：{closest}",
    ),
    "mcp.unknown_tool_patch": (
        "unknown tool {name!r}; a unified diff is applied by {edit} with its `patch` argument",
        "未知工具 {name!r}；统一格式 diff 请用 {edit} 的 `patch` 参数应用",
    ),
    "mcp.parse_error": (
        "parse error: the line is not JSON (first problem at character {position})",
        "解析错误：该行不是 JSON（第一个问题位于第 {position} 个字符）",
    ),
    "mcp.parse_utf8": (
        "parse error: the line is not UTF-8 (first bad byte at byte {position})",
        "解析错误：该行不是 UTF-8（第一个错误字节位于第 {position} 个字节）",
    ),
    "mcp.too_large": (
        "a request line did not fit in this server's memory; it was read to its end and dropped",
        "一条请求行超出了本服务器的内存；已读到行尾并丢弃",
    ),
    "mcp.unsendable": (
        "a reply did not fit in this server's memory to be sent",
        "一条回复超出了本服务器的内存，无法发送",
    ),
    "mcp.parse_chip": (" - the line was saved as chip://{id}", " —— 该行已保存为 chip://{id}"),
    "mcp.invalid_request": ("invalid request: {detail}", "无效请求：{detail}"),
    "mcp.invalid_params": ("invalid params: {detail}", "无效参数：{detail}"),
    "mcp.no_tool_name": (
        "tools/call names no tool: params.name must be one of the listed tools, such as {closest}",
        "tools/call 未指定工具：params.name 必须是所列工具之一，例如 {closest}",
    ),
    "mcp.unknown_method": ("method not found: {method}", "未知方法：{method}"),
    "mcp.args_chip": ("arguments saved as chip://{id}", "参数已保存为 chip://{id}"),
}


def tr(lang, key, **fields):
    """The message `key` in `lang` ("en" or "zh") with `fields` filled in.

    A field named `NAME_key` is itself a message key: it fills {NAME}, translated too. A field
    longer than _FIELD_MAX characters is cut. Literal braces are doubled in the table; a key or
    field that is missing is a bug and raises KeyError (tests/test_messages.py formats every
    message).
    """
    pair = MESSAGES[key]
    template = pair[1] if lang == "zh" else _singular(pair[0], fields)
    for name in [name for name in fields if name.endswith("_key")]:
        fields[name[:-4]] = tr(lang, fields.pop(name))
    for name, value in fields.items():  # (a value the caller sent is never sent back whole)
        if isinstance(value, str) and len(value) > _FIELD_MAX:
            fields[name] = f"{value[: _FIELD_MAX // 2]}... ({len(value)} characters)"
    return template.format(**fields)


_FIELD_MAX = 2000  # characters of one field of a message; the places that show names cut at 60
_NOUNS = ("line", "item", "byte", "file", "character", "event", "time", "snapshot")


def _counted(count, noun):
    """`count` and an English `noun`, plural unless one (a snapshot's summary: `write: 1 line`)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _singular(template, fields):
    """An English `template` whose counts name as many things as they are: where the field is 1,
    `{total} lines` -> `{total} line` and `{count} file(s)` -> `{count} file`; else `file(s)` -> `files`."""
    for name, value in fields.items():
        if type(value) is int and "{" + name + "} " in template:
            for noun in _NOUNS:
                said = f"{{{name}}} {noun}"
                if value == 1:
                    template = template.replace(said + "s", said).replace(said + "(s)", said)
                else:
                    template = template.replace(said + "(s)", said + "s")
    return template


def detect_lang(flag=None, environ=None):
    """`--lang` if given, else the first set of LC_ALL, LC_MESSAGES, LANG: zh* means Chinese."""
    if flag:
        return flag
    environ = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


# ====================================================================================================
# 3. Errors
# ====================================================================================================


class ToolError(Exception):
    """The one exception raised on purpose: a stable code, a message and a hint (docs/behaviour.md#errors).

    `fields` fill the message templates; `data` are extra members of the error object
    (e.g. `total`, `actual`, `candidates`).
    """

    def __init__(self, code, key, hint=None, data=None, **fields):
        super().__init__(code, key)
        self.code = code
        self.key = key
        self.hint_key = (
            hint if hint is not None else (key + ".hint" if key + ".hint" in MESSAGES else "arg.hint")
        )
        self.data = data or {}
        # (a number of more than 30 digits is the caller's, never a count: shown cut, as text is;
        # a `start` of 4,000 digits was echoed whole, twice)
        self.fields = {k: _clip(str(v)) if _huge(v) else v for k, v in fields.items()}

    def to_dict(self, lang, names=None):
        """The error object; `names` are the tool names as the server lists them (for {trx_status}
        and the like in texts: tool_names()), and how to pass {force} when not `force: true`."""
        fields = {"force": "force: true" if names else "--force"}
        fields.update(names or tool_names(prefix=False), **self.fields)  # (default: the CLI's words)
        if self.fields.get("listed"):  # ({tool} is a tool's base name: named as listed in this mode)
            fields["tool"] = fields.get(fields["tool"].replace("-", "_"), fields["tool"])
        hint = self.hint_key if names else _cli_key(self.hint_key)
        error = {
            "code": self.code,
            "message": tr(lang, self.key if names else _cli_key(self.key), **fields),
            "hint": tr(lang, hint, **fields),
        }
        for name, value in self.data.items():
            error.setdefault(name, value)
        closest = self.data.get("closest")
        if self.code == "MISMATCH" and isinstance(closest, dict) and closest.get("first_difference"):
            words = describe_difference(closest["first_difference"], lang)  # (the kind, in words)
            error["message"] += tr(lang, "mismatch_words", words=words)
        return error


def _huge(value):
    return type(value) is int and not -(10**30) < value < 10**30


def _cli_key(key):
    """The message key of the CLI's words for `key`: KEY.cli where its text names options
    (`--occurrence N`) instead of the server's JSON arguments (`occurrence N to the target`)."""
    return key + ".cli" if key + ".cli" in MESSAGES else key


def display_text(text):
    """`text` safe to show and to put in strict JSON: undecodable bytes of a file name (and any
    lone surrogate) become U+FFFD. Display only: operations use the real name."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return re.sub("[\ud800-\udfff]", "\ufffd", text)


def json_safe(value):
    """`value` as strict JSON can hold it: non-finite numbers become "NaN", "Infinity", "-Infinity";
    lone surrogates become U+FFFD (docs/behaviour.md#json-rpc-transport)."""
    if isinstance(value, float):
        return _number_or_name(value)
    if isinstance(value, str):
        return display_text(value)
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def _number_or_name(number):
    """A finite float itself; NaN and the infinities by name, as strict JSON cannot hold them."""
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "Infinity" if number > 0 else "-Infinity"
    return number


def dumps_strict(value, **options):
    """RFC 8259 JSON text of `value`, never NaN, Infinity or a lone surrogate (fast when clean)."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, **options)
        text.encode("utf-8")
        return text
    except (ValueError, UnicodeEncodeError):
        return json.dumps(json_safe(value), ensure_ascii=False, allow_nan=False, **options)


def _values_in(value):
    """Yield (every value in `value`, itself too, how many arrays and objects hold it), walked
    without recursion: a value may nest deeper than the interpreter's stack."""
    stack = [(value, 0)]
    while stack:
        one, depth = stack.pop()
        yield one, depth
        if isinstance(one, (dict, list)):
            stack.extend((inner, depth + 1) for inner in (one.values() if isinstance(one, dict) else one))


def non_finite(value):
    """True when `value` holds a number JSON cannot carry (NaN, Infinity, 1e400) at any depth."""
    return any(
        isinstance(one, float) and (one != one or one in (float("inf"), float("-inf")))
        for one, _depth in _values_in(value)
    )


MAX_NESTING = 64  # levels of arrays and objects a call's arguments may hold (a tool's need four)


def nesting(value):
    """How deep arrays and objects nest in `value`."""
    return max(depth + isinstance(one, (dict, list)) for one, depth in _values_in(value))


_CONTROL = _LazyPattern(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # (all but tab and line feed)


def _is_terminal(stream):
    """Whether `stream` is a terminal (a closed, detached or missing one is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _shown_on_terminal(text):
    """`text` with its control characters escaped (`\\x1b`): on a terminal, a file's ESC sequences
    would be run, not shown (they can rewrite the screen, the title, or what a line seems to say).
    A pipe or a file gets the bytes as they are: scripts read them."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text) if _CONTROL.search(text) else text


def _print_error(text):
    """`text` as a line on stderr; nothing when stderr is closed (`2>&-`): never into stdout, which
    a script may be reading as a file's text. On a terminal, control characters are escaped."""
    if sys.stderr is not None:
        text = text if text.endswith("\n") else text + "\n"
        sys.stderr.write(_shown_on_terminal(text) if _is_terminal(sys.stderr) else text)


class _suppress_os:
    """`with _suppress_os():` ignores an OSError (cleanup that may find nothing to clean)."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        return kind is not None and issubclass(kind, OSError)


def _listdir(path):
    """The names in the folder `path`; [] when it cannot be listed."""
    try:
        return os.listdir(path)
    except OSError:
        return []


def invalid(key, hint=None, **fields):
    """INVALID_ARGUMENT with the message `key`; its hint is `hint`, else KEY.hint, else arg.hint."""
    return ToolError("INVALID_ARGUMENT", key, hint, **fields)


def _show(value):
    """A value the caller sent as a message shows it: JSON, cut to 60 characters."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = "[...]" if isinstance(value, list) else "{...}" if isinstance(value, dict) else repr(value)
    return _clip(text)


def _clip(text, limit=60):
    """`text` as a message shows a value the caller sent: at most `limit` characters, so a name of
    a megabyte is not sent back whole (docs/behaviour.md#errors)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _out_of_memory(tool):
    """TOO_LARGE for a call that ran out of memory (a file or an argument too large for it)."""
    return ToolError("TOO_LARGE", "out_of_memory", tool=tool)


def out_of_range(file, start, end, total):
    """Lines start..end are not in `file` (docs/behaviour.md#line-arguments): OUT_OF_RANGE naming the valid range."""
    return ToolError(
        "OUT_OF_RANGE", "out_of_range", data={"total": total}, file=file, start=start, end=end, total=total
    )


def os_error(exc, path):
    """Map an OSError to PERMISSION or IO, carrying the operating system's text."""
    detail = exc.strerror or str(exc)
    if _errno_name(exc) == "ENAMETOOLONG":  # (the caller's path, not the disk, is at fault)
        return ToolError("INVALID_ARGUMENT", "name_too_long", "arg.hint", path=_clip(path), detail=detail)
    code = "PERMISSION" if isinstance(exc, PermissionError) else "IO"
    hint = _OS_HINTS.get(_errno_name(exc))  # (else the code's own: free space, permissions)
    return ToolError(code, code.lower(), hint, path=path, detail=detail)


def _link_loop(path):
    """IO for a path whose symbolic links we followed more than the system would (ELOOP)."""
    import errno

    return ToolError("IO", "io", "io_link_loop.hint", path=path, detail=os.strerror(errno.ELOOP))


_OS_HINTS = {
    "EMFILE": "io_descriptors.hint",
    "ENFILE": "io_descriptors.hint",
    "ELOOP": "io_link_loop.hint",
    "EBUSY": "io_busy.hint",
    "EPERM": "permission_eperm.hint",
    "EFBIG": "io_size_limit.hint",
    "ENOSPC": "io_no_space.hint",
}


def _errno_name(exc):
    """The symbolic name of an OSError's errno ("ELOOP", "EMFILE", ...), or None."""
    import errno

    return errno.errorcode.get(exc.errno)


def _out_of_descriptors(exc):
    return _errno_name(exc) in ("EMFILE", "ENFILE")


# ====================================================================================================
# 4. Text: a decoded file and pure line edits (docs/behaviour.md#text-model, #diffs)
# ====================================================================================================
#
# A file is kept as bytes. `body` is the file without its BOM, in an encoding where b"\n" can only be
# a line break (UTF-8 or a declared ASCII-compatible legacy codec); UTF-16 files are carried as UTF-8
# and turned back into UTF-16 when written. Line edits splice byte ranges of whole lines, so every
# line an edit does not name keeps its exact bytes.

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-bom"),
    (b"\xff\xfe\x00\x00", "utf-32le"),  # before UTF-16 LE, whose BOM it starts with
    (b"\x00\x00\xfe\xff", "utf-32be"),
    (b"\xff\xfe", "utf-16le"),
    (b"\xfe\xff", "utf-16be"),
)
_UTF16_CODECS = {
    "utf-16le": "utf-16-le",
    "utf-16be": "utf-16-be",
    "utf-32le": "utf-32-le",
    "utf-32be": "utf-32-be",
    "utf-16": "utf-16-le",  # named without a BOM: little-endian, and never a BOM added on writing
    "utf-32": "utf-32-le",
}
_EOL_NAMES = {b"\n": "lf", b"\r\n": "crlf"}


class Text:
    """A decoded file: `body` bytes (lines end in b"\\n" or b"\\r\\n"), its codec, BOM and disk form."""

    __slots__ = ("body", "codec", "encoding", "bom", "wire", "_newlines")

    def __init__(self, body, codec="utf-8", encoding="utf-8", bom=b"", wire=None):
        self._newlines = None
        self.body = body  # bytes after the BOM, in `codec`
        self.codec = codec  # decodes pieces of body: "utf-8" or a legacy codec
        self.encoding = encoding  # the name reported to users
        self.bom = bom
        self.wire = wire  # None, or the UTF-16 codec the file is stored in

    def newlines(self):
        """Number of b"\\n" in the body (counted once: on a large file each count is a pass over it)."""
        if self._newlines is None:
            body = self.body
            self._newlines = _newline_index(body)[1] if len(body) >= 1 << 20 else body.count(b"\n")
        return self._newlines

    def total(self):
        """Number of lines."""
        body = self.body
        return self.newlines() + (1 if body and not body.endswith(b"\n") else 0)

    def to_bytes(self, body=None):
        body = self.body if body is None else body
        if self.wire:
            body = bytes(body).decode("utf-8").encode(self.wire)
        if self.bom:
            return b"".join((self.bom, body))
        return bytes(body)

    def decode(self, start=0, stop=None):
        if start == 0 and stop is None:
            return self.body.decode(self.codec)
        return str(memoryview(self.body)[start:stop], self.codec)  # (no copy of the bytes first)

    def encode(self, string, new=None):
        """`string` in the body's codec; ENCODING unless decoding gives back the same text,
        INVALID_ARGUMENT when its new text (`new`, by default all of it) holds a NUL, which would
        make the file binary (docs/behaviour.md#text-model); a NUL of the file's own is kept."""
        new = string if new is None else new
        nul = new.find("\0")
        if nul >= 0:
            raise ToolError("INVALID_ARGUMENT", "content_nul", line=new.count("\n", 0, nul) + 1)
        try:
            data = string.encode(self.codec)
        except UnicodeError as exc:  # (a codec may fail as a whole: no .start then)
            char = exc.object[exc.start] if isinstance(exc, UnicodeEncodeError) else string[:1]
            raise _unencodable(char, self.encoding) from None
        if self.codec != "utf-8":  # e.g. raw_unicode_escape reads "\\u0041" back as "A"
            try:
                back = data.decode(self.codec)
            except UnicodeError:
                back = ""
            if back != string:
                char = next((x for x, y in zip(string, back) if x != y), string[len(back) : len(back) + 1])
                raise ToolError("ENCODING", "encoding_content", encoding=self.encoding, char=char)
        return data


@functools.cache
def _one_byte_codec(codec):
    """Whether `codec` gives each byte a character of its own (cp1252, latin-1; not GBK)."""
    return len(bytes(range(0x80, 0x100)).decode(codec, "replace")) == 0x80


# what an ASCII-compatible text read as UTF-8 holds when it is UTF-8 and rarely else: Latin-1's
# letters and signs, or characters of 3 or 4 bytes (CJK, symbols, emoji); two bytes of GBK read as UTF-8 are
# mostly IPA, combining marks, Greek, Cyrillic, Hebrew or Arabic (状态 is U+05F4 U+032C)
_LIKELY_UTF8 = _LazyPattern(r"[\x00-\x7f\xa0-\xff\u0800-\U0010ffff]*")
_BEYOND_ASCII = _LazyPattern(rb"[\xc2-\xf4]")


def _likely_utf8(raw, codec):
    """Whether bytes beyond ASCII that are valid UTF-8 are that and not the named `codec`: for a
    codec of one byte a character always (cp1252 reads é's UTF-8 as Ã©); else when they hold at
    least 4 characters or only likely ones (café). Of random GB2312 text, one character is then
    taken for UTF-8 0.9 % of the time, two 0.14 %, four 0.06 % (measured: docs/decisions.md)."""
    if _one_byte_codec(codec) or len(list(itertools.islice(_BEYOND_ASCII.finditer(raw), 4))) == 4:
        return True
    try:
        return bool(_LIKELY_UTF8.fullmatch(raw.decode("utf-8")))
    except UnicodeDecodeError:
        return False


def _unencodable(char, encoding):
    """The error of content whose character `char` the file's `encoding` cannot hold: half of a
    UTF-16 pair is no character of any file (a cut `\\u` escape), anything else is ENCODING."""
    if "\ud800" <= char <= "\udfff":
        return ToolError("INVALID_ARGUMENT", "content_surrogate", point=f"{ord(char):04X}")
    return ToolError("ENCODING", "encoding_content", encoding=encoding, char=char)


def _lookup_codec(name):
    """The codec's canonical name; ENCODING for an unknown name, INVALID_ARGUMENT for a codec that
    does not turn text into bytes (hex, rot13, base64...)."""
    import codecs

    try:
        info = codecs.lookup(name)
    except (LookupError, TypeError, ValueError):
        raise ToolError("ENCODING", "encoding_unknown", encoding=_clip(str(name))) from None
    if not getattr(info, "_is_text_encoding", True):
        raise invalid("encoding_not_text", encoding=name)
    if not info.name.startswith(("utf-16", "utf-32")):
        try:  # (EBCDIC, punycode, unicode-escape, "undefined": lines would not end in b"\n")
            kept = "a\n\r".encode(info.name).endswith(b"a\n\r")
        except UnicodeError:
            kept = False
        if not kept:
            raise ToolError("ENCODING", "encoding_not_ascii", encoding=name)
        if not _encodes_piecewise(info.name):
            raise ToolError("ENCODING", "encoding_stateful", encoding=name)
    return info.name


@functools.cache  # (one answer per codec)
def _encodes_piecewise(codec):
    """Whether text in `codec` is the bytes of its characters one after the other (no shift state:
    UTF-7's `+AOkA6Q-` for two é is not twice `+AOk-`), so a line's bytes can be replaced alone."""
    import codecs

    def encoded(string):  # (utf-8-sig's BOM is the file's, kept apart from its lines)
        data = string.encode(codec)
        return data[3:] if data.startswith(codecs.BOM_UTF8) else data

    samples = []
    for char in ("\u00e9", "\u4e2d", "\u00e9\u4e2d"):
        try:
            samples.append((char, encoded(char)))
        except UnicodeError:
            continue
    return all(encoded(a + b) == x + y for a, x in samples for b, y in samples)


def refuse_binary(sample, file, encoding=None):
    """BINARY_FILE when the first 8 KB hold a NUL, unless the file is UTF-16/32 (BOM or named)."""
    if any(sample.startswith(bom) for bom, name in _BOMS[1:]):
        return
    if encoding and _lookup_codec(encoding).startswith(("utf-16", "utf-32")):
        return
    nul = sample.find(b"\0", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        raise ToolError("BINARY_FILE", "binary", _utf16_hint(sample), file=file, offset=nul)


def _utf16_hint(sample):
    """The hint of a file with NUL bytes: UTF-16 without a BOM, when every other byte of its start
    is NUL (text of ASCII in UTF-16: it can be read as such when named), else binary."""
    head = sample[:512]
    head = head[: len(head) // 2 * 2]
    for parity, key in ((1, "binary_utf16.hint_le"), (0, "binary_utf16.hint_be")):
        if head and head[parity::2].count(0) == len(head) // 2 and head[1 - parity :: 2].count(0) == 0:
            return key
    return None


def decode_file(raw, file, encoding=None):
    """Detect how `raw` file bytes are encoded and return a Text, or raise BINARY_FILE / ENCODING.

    UTF-8 with BOM and UTF-16 with BOM are detected; otherwise the bytes must be UTF-8, or
    `encoding` names a codec through which the whole file round-trips exactly. A file with
    characters beyond ASCII that is UTF-8 is read as UTF-8 whatever `encoding` names (an
    ASCII-compatible one): it names the encoding of files that are not, and an edit of a UTF-8
    file read as cp1252 wrote its new line in cp1252, two encodings in one file. (A file of ASCII
    alone is either: it takes the one named, as its project's other files do.)
    """
    for bom, name in _BOMS:
        if raw.startswith(bom):
            if name == "utf-8-bom":
                return _decode_ascii_compatible(raw[3:], file, "utf-8", name, bom)
            return _decode_utf16(raw[len(bom) :], file, name, bom)
    codec = _lookup_codec(encoding) if encoding else "utf-8"
    codec = "utf-8" if codec == "utf-8-sig" else codec  # (its BOM was looked for above: UTF-8 without one)
    if codec.startswith(("utf-16", "utf-32")):
        text = _decode_utf16(raw, file, codec, b"", _UTF16_CODECS.get(codec, codec))
        _refuse_not_wide(raw, text, file, codec)
        return text
    refuse_binary(raw, file)  # (no BOM, no UTF-16 named: a NUL makes it binary)
    return _decode_named(raw, file, codec)


def _refuse_not_wide(raw, text, file, codec):
    """ENCODING for a file without a BOM named UTF-16 or UTF-32 that is not: most bytes decode in
    them, so the other byte order, or an ASCII file named so by mistake, read as one line of other
    characters, and an edit wrote the whole file anew in that encoding. Only on strong evidence:
    the file breaks no line in this encoding and does in the other byte order, or it reads as a
    UTF-8 (or ASCII) text file of lines (_text_with_lines)."""
    if not raw or b"\n" not in raw or b"\n" in text.body:
        return
    if "\n" in _other_byte_order(raw, codec) or _text_with_lines(raw):
        raise ToolError(
            "ENCODING", "encoding_not_wide", file=file, encoding=codec, why_key="why.wide_newlines"
        )


_NOT_TEXT = _LazyPattern(rb"[\x00-\x08\x0e-\x1f\x7f]")  # (control bytes no text file holds)


def _text_with_lines(raw):
    """Whether `raw` reads as a text file of lines in UTF-8 (ASCII included): valid UTF-8 with no
    control byte, lines of four bytes or more on average, and a final newline or two lines at least.
    UTF-16 characters alone give such bytes rarely: `上海市上海` holds a 0x02, `ਪੰਜਾਬ` a 0x0A every
    other byte, `往上` big-endian is no UTF-8."""
    newlines = raw.count(b"\n")
    if newlines > len(raw) // 4 or not (raw.endswith(b"\n") or newlines >= 2) or _NOT_TEXT.search(raw):
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _other_byte_order(raw, codec):
    """`raw` decoded in the other byte order of a UTF-16 `codec` ("" where that does not decode)."""
    wire = _UTF16_CODECS.get(codec, codec)
    other = {"utf-16-le": "utf-16-be", "utf-16-be": "utf-16-le"}.get(wire)
    try:
        return raw.decode(other) if other else ""
    except UnicodeDecodeError:
        return ""


def _decode_named(raw, file, codec):
    """decode_file of a file without a BOM in an ASCII-compatible `codec`: UTF-8 first when the
    codec is another and the file holds characters beyond ASCII (it names the encoding of files
    that are not UTF-8) and they are likely UTF-8 (two GBK characters, 状态, are valid UTF-8 too)."""
    if codec != "utf-8" and not raw.isascii() and _likely_utf8(raw, codec):
        try:
            return _decode_ascii_compatible(raw, file, "utf-8", "utf-8", b"")
        except ToolError as exc:
            if exc.key != "not_utf8":
                raise
    return _decode_ascii_compatible(raw, file, codec, codec, b"")


_XML_ENCODING = _LazyPattern(rb"""<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z][\w.-]*)["']""")
_CODING_COOKIE = _LazyPattern(rb"[ \t\f]*#[^\r\n]*?coding[:=][ \t]*([-\w.]+)")  # PEP 263
_BLANK_OR_COMMENT = _LazyPattern(rb"[ \t\f]*(?:[#\r\n]|\Z)")


# an HTML page's <meta charset="X"> or <meta http-equiv="Content-Type" content="...; charset=X">,
# looked for in its first 1024 bytes as browsers do
_HTML_CHARSET = _LazyPattern(rb"""<meta\s[^>]*?\bcharset\s*=\s*["']?([A-Za-z][\w.:-]*)""", re.I)


def declared_encoding(raw):
    """The encoding a file names for itself, or None: the XML declaration it starts with, a PEP 263
    coding comment on its first line (or on its second after a comment or blank line), or, in a
    file that starts with a tag, an HTML <meta> charset in its first 1024 bytes."""
    m = _XML_ENCODING.match(raw) or _CODING_COOKIE.match(raw)
    if m is None and _BLANK_OR_COMMENT.match(raw):
        second = raw.find(b"\n") + 1
        m = _CODING_COOKIE.match(raw, second) if second else None
    if m is None and raw.lstrip()[:1] == b"<":
        m = _HTML_CHARSET.search(raw, 0, 1024)
    return m.group(1).decode("ascii") if m else None


def _decode_ascii_compatible(body, file, codec, name, bom):
    if codec == "utf-8":
        if not body.isascii():
            try:
                body.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ToolError(
                    "ENCODING", "not_utf8", file=file, offset=exc.start + len(bom), byte=body[exc.start]
                ) from None
        return Text(body, "utf-8", name, bom)
    try:
        same = body.decode(codec).encode(codec) == body
    except UnicodeDecodeError as exc:
        raise ToolError("ENCODING", "encoding_decode", file=file, encoding=codec, offset=exc.start) from None
    except UnicodeError:  # (encoding back failed, or a codec that fails as a whole)
        same = False
    if not same or "\n".encode(codec) != b"\n" or "\r".encode(codec) != b"\r":
        raise ToolError("ENCODING", "encoding_roundtrip", file=file, encoding=codec)
    return Text(body, codec, name, bom)


def _decode_utf16(data, file, name, bom, codec=None):
    codec = codec or _UTF16_CODECS[name]
    try:
        string = data.decode(codec)
        if string.encode(codec) != data:
            raise ToolError("ENCODING", "encoding_roundtrip", file=file, encoding=name)
    except UnicodeError as exc:
        raise ToolError("ENCODING", "encoding_decode", file=file, encoding=name, offset=exc.start) from None
    return Text(string.encode("utf-8", "surrogatepass"), "utf-8", name, bom, codec)


# --- lines ----------------------------------------------------------------------------------------


def line_count(body):
    """Lines in `body`: every b"\\n" ends one, plus an unterminated last line."""
    count = body.count(b"\n")
    if body and not body.endswith(b"\n"):
        count += 1
    return count


def eol_counts(body, newlines=None):
    """(CRLF count, LF-only count); `newlines` is body.count(b"\\n") when the caller has it."""
    newlines = body.count(b"\n") if newlines is None else newlines
    crlf = body.count(b"\r\n") if b"\r" in body else 0
    return crlf, newlines - crlf


def dominant_eol(body):
    """The terminator new lines get: the most frequent one; ties and none -> LF."""
    if b"\r" not in body:
        return b"\n"
    crlf, lf = eol_counts(body)
    return b"\r\n" if crlf > lf else b"\n"


def eol_name(crlf, lf):
    """The `eol` a read reports for these counts (eol_counts()): lf, crlf or mixed."""
    if crlf and lf:
        return "mixed"
    return "crlf" if crlf else "lf"


def skip_lines(body, pos, count):
    """Offset just past the `count`-th newline at or after `pos` (len(body) when there are fewer)
    of bytes or of a str."""
    size = len(body)
    chunk = 1 << 20
    newline = "\n" if isinstance(body, str) else b"\n"
    while count > 64 and pos < size:  # count newlines in C, window by window
        stop = min(pos + chunk, size)
        found = body.count(newline, pos, stop)
        if found < count:
            count -= found
            pos = stop
        elif chunk > 4096:
            chunk >>= 1  # the line is in this window: look at its first half, then the next
        else:
            break
    find = body.find
    while count > 0:
        index = find(newline, pos)
        if index < 0:
            return size
        pos = index + 1
        count -= 1
    return pos


def line_span(body, start, end):
    """Byte offsets (a, b) of lines start..end (1-based, inclusive), terminators included."""
    a = line_start(body, start)
    return a, skip_lines(body, a, end - start + 1)


_LINE_WINDOW = 1 << 16  # bytes per window of a line index
# Line indexes of the large bodies the running tool call counts or looks up lines in (id -> (body,
# counts, total)): a call of be-edit with many items, a diff of many hunks, would otherwise count
# newlines from the start of the file for each. The body is held, so an id is never mistaken for
# another object's; call_tool empties it when a call ends, and it never holds more than
# _LINE_INDEXES bodies.
_LINE_INDEX = {}
_LINE_INDEXES = 4


def _newline_index(body):
    """(counts, total) for a large body: counts[w] is the number of newlines before window w, total
    all of them. Kept for the running tool call, so a count of the lines and a look-up of one
    line pass over the body once together."""
    entry = _LINE_INDEX.get(id(body))
    if entry is None or entry[0] is not body:
        counts, total = [], 0
        for pos in range(0, len(body), _LINE_WINDOW):
            counts.append(total)
            total += body.count(b"\n", pos, pos + _LINE_WINDOW)
        while len(_LINE_INDEX) >= _LINE_INDEXES:
            _LINE_INDEX.pop(next(iter(_LINE_INDEX)))
        entry = _LINE_INDEX[id(body)] = (body, counts, total)
    return entry[1], entry[2]


def line_start(body, line):
    """Offset where line `line` (1-based) starts: just past the (line - 1)-th b"\n"."""
    if line <= 1:
        return 0
    if len(body) < 1 << 20:
        return skip_lines(body, 0, line - 1)
    counts = _newline_index(body)[0]
    import bisect

    window = bisect.bisect_left(counts, line - 1) - 1  # the last window that starts before it
    return skip_lines(body, window * _LINE_WINDOW, line - 1 - counts[window])


def split_decoded(string):
    """Lines of a decoded chunk as (text, terminator) pairs; only \\n and \\r\\n end lines."""
    if not string:
        return []
    parts = string.split("\n")
    last = parts.pop()
    lines = [(p[:-1], "\r\n") if p.endswith("\r") else (p, "\n") for p in parts]
    if last:
        lines.append((last, ""))
    return lines


def render_numbered(lines, first):
    """`N<TAB>text` per line, joined with \\n (terminators are not shown)."""
    return "\n".join(f"{n}\t{text}" for n, (text, _eol) in enumerate(lines, first))


def content_lines(content, body=b""):
    """docs/behaviour.md#text-model: "" is no line; its line breaks as content_newlines() reads them
    (for the file `body`); one trailing terminator dropped; a lone CR is text (`x\\r` keeps it)."""
    if content == "":
        return []
    text = content_newlines(content, body)
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def content_newlines(content, body=b""):
    """`content` with its line breaks as LF: CRLF, and CRs doubled before an LF (a client that
    turned \\n into \\r\\n in text that had \\r\\n already sends \\r\\r\\n), are line breaks
    the file's own line ending replaces, not CRs to keep in it; unless the file (`body`) holds
    \\r\\r\\n itself: then, as in its text, those CRs are text (a file written back as it is)."""
    if "\r" not in content:
        return content
    return normalize_newlines(content) if b"\r\r\n" in body else re.sub(r"\r+\n", "\n", content)


def encode_block(text, lines, eol):
    """Whole lines, each terminated with `eol`, encoded for `text`."""
    if not lines:
        return b""
    string = eol.decode().join(lines) + eol.decode()
    return text.encode(string)


def join_splice(body, plan):
    """The new body a splice plan (a, block, b) describes: body[:a] + block + body[b:]."""
    a, block, b = plan
    view = memoryview(body)
    return b"".join((view[:a], block, view[b:]))


def splice_plan(body, a, b, block, eol):
    """(a, block, b) such that body[:a] + block + body[b:] is the edit, final-newline rule applied.

    When the file does not end with a terminator and the edit reaches its end, the new last line
    gets none either (and a line appended after an unterminated last line first terminates it),
    unless that new last line is empty: it keeps its terminator, or it would not exist.
    """
    size = len(body)
    if size and b == size and not body.endswith(b"\n"):
        if block:
            block = _unterminated(block, eol)
            if a == size:
                block = eol + block
        elif a > 0:
            a = _last_line_terminator_cut(body, a)
    return a, block, b


def _unterminated(block, eol):
    """`block` as the new last line of a file without a final terminator: its own terminator (the
    `eol` it was given, not a `\\r` of its text before it) goes, unless its last line is empty (an
    empty last line cannot go unterminated: it would vanish)."""
    stripped = block[: -len(eol)] if block.endswith(eol) else block[:-1]
    return stripped if stripped and not stripped.endswith(b"\n") else block


def _last_line_terminator_cut(body, a):
    """Where a deletion to the end of an unterminated file starts: before the terminator of the line
    left last, so it ends unterminated too, unless that line is empty (it keeps its terminator, or
    it would vanish)."""
    cut = 2 if body[a - 2 : a] == b"\r\n" else 1
    if a - cut > 0 and body[a - cut - 1 : a - cut] != b"\n":
        return a - cut
    return a


def view_hash(path, start, end, chunk, total):
    """The HASH of a viewed_code_id. An empty range (an empty file, or `start` past the end) hashes
    the file's line count instead of bytes, so the view goes stale when lines appear."""
    digest = _sha256_new(f"{path}\0{start}\0{end}\0".encode("utf-8", "surrogatepass"), len(chunk))
    digest.update(chunk if end >= start else f"\0lines={total}".encode())
    return digest.hexdigest()[:16]


def make_view_id(path, start, end, chunk, total, where=None):
    """v1:START-END:HASH over the resolved path, the range and the exact line bytes. `where`, (the
    file's body, the offset of `chunk` in it, whether the lines have no identical copy elsewhere
    in it), adds a mark: for unique lines :uLEN.FIRST.LAST.LINES.ABOVE.BELOW, LEN their size in
    bytes, FIRST, LAST the CRC-32 of their first and last line, LINES the file's line count
    `total`, ABOVE, BELOW the CRC-32 of the lines around them (0: none), and where one of those
    has no letter or digit .NEAR_ABOVE.NEAR_BELOW, the CRC-32 of the nearest lines that have
    (_telling_neighbour): only such a view may follow its lines when they move; for others :nLINES.ABOVE.BELOW.BEFORE.AFTER, BEFORE and AFTER
    the CRC-32 of every byte above and below them, so that lines that still stand where they were
    read in a file whose line count changed are not taken when only the bytes above them changed
    (docs/behaviour.md#viewed_code_id)."""
    token = f"v1:{start}-{end}:{view_hash(path, start, end, chunk, total)}"
    if not (where and chunk):
        return token
    body, a, b = where[0], where[1], where[1] + len(chunk)
    if not where[2]:
        from zlib import crc32

        view = memoryview(body)
        above, below = _around_crcs(body, a, b)
        before, after = crc32(view[:a]), crc32(view[b:])
        return token + f":n{total}.{above:08x}.{below:08x}.{before:08x}.{after:08x}"
    first, last = _edge_line_crcs(chunk)
    around = _around_crcs(body, a, b)
    nearest = tuple(_telling_neighbour(body, a, b, up) for up in (True, False))
    nearest = tuple(crc if crc is not None else next_to for crc, next_to in zip(nearest, around))
    token += f":u{len(chunk)}.{first:08x}.{last:08x}.{total}.{around[0]:08x}.{around[1]:08x}"
    return token if nearest == around else token + f".{nearest[0]:08x}.{nearest[1]:08x}"


def _around_crcs(body, a, b):
    """CRC-32 of the line before body[a:b] and of the line after it (terminators included; the
    CRC-32 of nothing, 0, at the start or the end of the file)."""
    from zlib import crc32

    view = memoryview(body)
    above = crc32(view[body.rfind(b"\n", 0, a - 1) + 1 : a]) if a else 0
    return above, crc32(view[b : body.find(b"\n", b) + 1 or len(body)])


_ALNUM_TEXT = _LazyPattern(r"[^\W_]")  # (a line that can tell where it is: not blank, not `}`)
_TELLING_REACH = 100  # lines passed over to find a unique view's nearest telling neighbour


def _telling_neighbour(body, a, b, up):
    """The CRC-32 of the nearest line with a letter or a digit above body[a:b] (`up`) or below it,
    at most _TELLING_REACH lines away, passing over blank lines and lone brackets (they repeat too
    often to tell where anything is); None when there is none that near. Lines are bytes read as
    UTF-8 here, whatever the file's encoding, so a read and a later check agree."""
    from zlib import crc32

    for _ in range(_TELLING_REACH):
        if up:
            if a <= 0:
                return None
            start, stop = body.rfind(b"\n", 0, a - 1) + 1, a
        else:
            if b >= len(body):
                return None
            start, stop = b, body.find(b"\n", b) + 1 or len(body)
        line = body[start:stop]
        if _ALNUM_TEXT.search(line.decode("utf-8", "replace")):
            return crc32(line)
        a, b = start, stop
    return None


def _edge_line_crcs(chunk):
    """CRC-32 of the first and of the last line of `chunk` (terminators included): the first is the
    cheap fingerprint a moved view's candidate windows are compared with before their SHA-256 is
    computed; both tell a block changed where it stood from one that moved (_moved_view)."""
    from zlib import crc32

    view = memoryview(chunk)
    last_start = chunk.rfind(b"\n", 0, len(chunk) - 1) + 1
    return crc32(view[: chunk.find(b"\n") + 1 or len(chunk)]), crc32(view[last_start:])


# (numbers of at most 15 digits: int() refuses thousands of digits, and no file has 10**15 lines)
_VIEW_ID = _LazyPattern(
    r"v1:([0-9]{1,15})-([0-9]{1,15}):([0-9a-f]{16})(?::u([0-9]{1,15})\.([0-9a-f]{8})(?:\.([0-9a-f]{8})(?:\.([0-9]{1,15})"
    r"(?:\.([0-9a-f]{8})\.([0-9a-f]{8})(?:\.([0-9a-f]{8})\.([0-9a-f]{8}))?)?)?)?)?(?::n[0-9]{1,15}\.[0-9a-f]{8}\.[0-9a-f]{8}(?:\.[0-9a-f]{8}\.[0-9a-f]{8})?)?"
)
_VIEW_NEIGHBOURS = _LazyPattern(
    r":n([0-9]{1,15})\.([0-9a-f]{8})\.([0-9a-f]{8})(?:\.([0-9a-f]{8})\.([0-9a-f]{8}))?$"
)


def parse_view_id(token):
    """(start, end, hash, fingerprint): the fingerprint, (size of the lines in bytes, CRC-32 of the
    first, CRC-32 of the last, the file's line count, CRC-32 of the line above, of the line below,
    of the nearest line with a letter or a digit above, below; each but the first two None in a
    token made before its mark, the last two the line above and below when the token has none),
    when they were unique, else None."""
    match = _VIEW_ID.fullmatch(token.strip()) if isinstance(token, str) else None
    if not match or int(match.group(1)) < 1 or int(match.group(2)) < int(match.group(1)) - 1:
        raise ToolError("INVALID_ARGUMENT", "view_bad", id=_show(token))
    fingerprint = None
    if match.group(4):
        last, above, below, *nearest = (
            int(match.group(n), 16) if match.group(n) else None for n in (6, 8, 9, 10, 11)
        )
        lines = int(match.group(7)) if match.group(7) else None
        nearest = nearest if nearest[0] is not None else (above, below)
        fingerprint = (int(match.group(4)), int(match.group(5), 16), last, lines, above, below, *nearest)
    return int(match.group(1)), int(match.group(2)), match.group(3), fingerprint


_UNIQUE_LOOKS = 10_000  # places a block is compared at before it is taken for not unique


def view_unique(body, chunk, at):
    """True when the whole lines `chunk`, at byte `at` of `body`, stand nowhere else in it at a line
    start (another identical copy would make a moved view ambiguous). A block found more than
    _UNIQUE_LOOKS times inside other lines is taken for not unique: a safe answer, bounded."""
    if not chunk:
        return False
    find, size, looks = body.find, len(chunk), 0
    pos = find(chunk)
    while pos >= 0:
        if pos != at and (pos == 0 or body[pos - 1] == 10) and (chunk[-1] == 10 or pos + size == len(body)):
            return False
        looks += 1
        if looks > _UNIQUE_LOOKS:
            return False
        pos = find(chunk, pos + 1)
    return True


# --- finding text (replace by `old`) --------------------------------------------------------------


def normalize_newlines(string):
    """`string` with CRLF line breaks as LF (how `old` and `content` are compared with a file)."""
    return string.replace("\r\n", "\n")


def find_all(haystack, needle):
    """Every start offset of `needle` in `haystack`, overlapping ones included."""
    found = []
    index = haystack.find(needle)
    while index >= 0:
        found.append(index)
        index = haystack.find(needle, index + 1)
    return found


def _strip_trailing_ws(string):
    return "\n".join(line.rstrip(" \t\f\v\r") for line in string.split("\n"))


def locate_old(norm, old):
    """Find `old` in the LF-normalised file text `norm` (docs/cli.md#replace).

    Returns (tier, spans): tier "exact" or "loose" (trailing whitespace ignored), spans a list of
    (line_start, col_start, line_end, col_end_or_None) with 1-based lines; col_end None means "to the
    end of that line's text". Zero or several spans mean no match / ambiguous.
    """
    old = normalize_newlines(old)
    starts = find_all(norm, old)
    if starts:
        return "exact", _spans_of(norm, starts, len(old))
    loose_text, loose_old = _strip_trailing_ws(norm), _strip_trailing_ws(old)
    if not loose_old.strip("\n"):
        return "exact", []
    spans = _loose_spans(loose_text, loose_old)
    if not loose_old.endswith(old.rsplit("\n", 1)[-1]):  # (its last line lost trailing whitespace:
        spans = [span for span in spans if span[3] is None]  # a match must end where a line's text ends)
    return "loose", spans


def _loose_spans(loose_text, loose_old):
    """locate_old's spans of `loose_old` in `loose_text` (both without trailing whitespace)."""
    virtual = loose_old.endswith("\n") and not loose_text.endswith("\n")
    if virtual:
        loose_text += "\n"  # (the end of a file without a final newline ends its last line too)
    starts = find_all(loose_text, loose_old)
    spans = []
    for (line_s, col_s, line_e, col_e), s in zip(_spans_of(loose_text, starts, len(loose_old)), starts):
        stop = s + len(loose_old)
        if col_e >= 0 and (stop == len(loose_text) or loose_text[stop] == "\n"):
            col_e = None  # reached the stripped end: take the trailing whitespace too
        elif virtual and stop == len(loose_text):
            col_e = None  # (to the end of the last line: it still ends the file without a newline)
        spans.append((line_s, col_s, line_e, col_e))
    return spans


def _spans_of(string, starts, length):
    """(line_s, col_s, line_e, col_e) of string[s:s + length] for each of the ascending `starts`,
    lines counted on from the previous start (one pass: 300,000 matches of a one-letter `old`
    took 89 s when each counted from the top); a span ending after "\\n" ends that line (col_e -1)."""
    spans, line, counted = [], 1, 0
    for start in starts:
        line += string.count("\n", counted, start)
        counted, stop = start, start + length
        col_s = start - (string.rfind("\n", 0, start) + 1)
        if stop > start and string[stop - 1] == "\n":
            spans.append((line, col_s, line + string.count("\n", start, stop - 1), -1))
            continue
        col_e = stop - (string.rfind("\n", 0, stop) + 1)
        spans.append((line, col_s, line + string.count("\n", start, stop), col_e))
    return spans


def replace_in_lines(lines, col_s, col_e, replacement):
    """Text of `lines` ((text, eol) pairs) with [line 0 col_s .. last line col_e) replaced.

    col_e -1: the span includes the last line's terminator; None: up to the end of its text.
    """
    first_text = lines[0][0]
    last_text, last_eol = lines[-1]
    head = first_text[:col_s]
    if col_e == -1:
        tail = ""
    elif col_e is None:
        tail = last_eol
    else:
        tail = last_text[col_e:] + last_eol
    return head + replacement + tail


# --- diffs (docs/behaviour.md#diffs) --------------------------------------------------------------


def _range_label(start, count):
    if count == 1:
        return str(start)
    return f"{start - 1 if count == 0 else start},{count}"


def _diff_line(sign, text, eol, other_eol=None):
    out = [f"{sign}{text}"]
    if not eol:
        out.append("\\ No newline at end of file")
    elif other_eol is not None and other_eol and other_eol != eol:
        out.append(f"\\ line ending {_EOL_NAMES.get(eol.encode(), eol)!s}")
    return out


_QUOTED_NAME = {"\n": "\\n", "\t": "\\t", '"': '\\"', "\\": "\\\\"}


def diff_name(side, label):
    r"""`side` ("a" or "b") and the file's name as a diff header names it: quoted the way git quotes
    a name with a control character, a quote or a backslash, so a header stays one line and a patch
    made from it names the file again (parse_patch unquotes it).

    >>> diff_name("a", "ok.txt"), diff_name("b", 'new\nline "q".txt')
    ('a/ok.txt', '"b/new\\nline \\"q\\".txt"')
    """
    if not any(ch < " " or ch in '"\\\x7f' for ch in label):
        return f"{side}/{label}"
    escaped = "".join(
        _QUOTED_NAME.get(ch) or (f"\\{ord(ch):03o}" if ch < " " or ch == "\x7f" else ch) for ch in label
    )
    return f'"{side}/{escaped}"'


def unified_hunk(label, old_lines, new_lines, first, context=3, around=None):
    """One-hunk unified diff of two windows that start at the same line `first` and differ in one block.

    Lines are (text, terminator) pairs; a changed terminator alone shows as a changed line + a note.
    `around` = (lines before the edit, lines after it) in the old window: the hunk is anchored at the
    edit, so equal neighbouring lines cannot move it elsewhere.
    """
    limit = min(len(old_lines), len(new_lines))
    before, after = around if around else (limit, limit)
    p = 0
    while p < min(limit, before) and old_lines[p] == new_lines[p]:
        p += 1
    q = 0
    while q < min(limit - p, after) and old_lines[-1 - q] == new_lines[-1 - q]:
        q += 1
    old_stop, new_stop = len(old_lines) - q, len(new_lines) - q
    if p == old_stop and p == new_stop:
        return ""
    lo = max(0, p - context)
    old_hi, new_hi = min(len(old_lines), old_stop + context), min(len(new_lines), new_stop + context)
    out = [
        f"--- {diff_name('a', label)}",
        f"+++ {diff_name('b', label)}",
        f"@@ -{_range_label(first + lo, old_hi - lo)} +{_range_label(first + lo, new_hi - lo)} @@",
    ]
    for text, eol in old_lines[lo:p]:
        out.extend(_diff_line(" ", text, eol))
    for i in range(p, old_stop):
        text, eol = old_lines[i]
        pair = new_lines[i] if i < new_stop and new_lines[i][0] == text else None
        out.extend(_diff_line("-", text, eol, pair[1] if pair else None))
    for i in range(p, new_stop):
        text, eol = new_lines[i]
        pair = old_lines[i] if i < old_stop and old_lines[i][0] == text else None
        out.extend(_diff_line("+", text, eol, pair[1] if pair else None))
    for text, eol in old_lines[old_stop:old_hi]:
        out.extend(_diff_line(" ", text, eol))
    return "\n".join(out)


def full_diff(label, old_lines, new_lines, context=3):
    """Unified diff of two whole files (for write; the windows of an edit's changes): several hunks,
    as difflib.unified_diff makes them, of the lines _line_matcher matches."""
    old = [text + ("" if eol else "\x00") for text, eol in old_lines]  # (\x00: the line has no end)
    new = [text + ("" if eol else "\x00") for text, eol in new_lines]
    out = [
        line
        for group in _line_matcher(old, new).get_grouped_opcodes(context)
        for line in _hunk_of(old, new, group)
    ]
    out = [f"--- {diff_name('a', label)}", f"+++ {diff_name('b', label)}"] + out if out else []
    return "\n".join(
        line[:-1] + "\n\\ No newline at end of file" if line[-1:] == "\x00" else line for line in out
    )


def _hunk_of(old, new, group):
    """The lines of one hunk of a unified diff of `old` and `new`: its header, then difflib's
    grouped opcodes `group` as context, removed and added lines."""
    a, b = group[0][1], group[0][3]
    out = [f"@@ -{_range_label(a + 1, group[-1][2] - a)} +{_range_label(b + 1, group[-1][4] - b)} @@"]
    for tag, i1, i2, j1, j2 in group:
        out += [(" " if tag == "equal" else "-") + line for line in old[i1:i2]]
        out += ["+" + line for line in new[j1:j2]] if tag != "equal" else []
    return out


_ANCHORED_FROM = 2000  # lines of both sides from which _line_matcher matches unique lines first
_ANCHORS_PER = 100  # lines of the old side a unique line matched must stand for, at most


def _line_matcher(old, new):
    """difflib's SequenceMatcher of two lists of lines. From _ANCHORED_FROM lines on, the lines that
    stand once in each side are matched first, in the longest run that keeps their order, and
    difflib matches only between them: on its own it is quadratic where changes are many and
    spread (`patch` renaming a call on every 7th line of 20,000 lines: 11 s, bench/bench_patch.py).
    Fewer such lines than one in _ANCHORS_PER lines leave difflib alone: a few may be a line
    that moved far, which would then split every other line (a CSV of repeated rows whose header
    went to its end was diffed whole)."""
    import difflib

    anchors = _unique_anchors(old, new) if len(old) + len(new) >= _ANCHORED_FROM else []
    if len(anchors) * _ANCHORS_PER < len(old):
        return difflib.SequenceMatcher(None, old, new)

    class Anchored(difflib.SequenceMatcher):
        def get_matching_blocks(self):  # (the documented method the opcodes are made from)
            blocks, i0, j0 = [], 0, 0
            for i, j in [*anchors, (len(old), len(new))]:
                gap = difflib.SequenceMatcher(None, old[i0:i], new[j0:j]).get_matching_blocks()
                blocks += [(i0 + x, j0 + y, n) for x, y, n in gap if n]
                blocks += [(i, j, 1)] if i < len(old) else []
                i0, j0 = i + 1, j + 1
            merged = []  # (blocks that touch are one, as difflib gives them: else a run of equal
            for i, j, n in blocks:  # lines cut in pieces made hunks of context alone)
                if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
                    merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + n)
                else:
                    merged.append((i, j, n))
            return [difflib.Match(*block) for block in merged] + [difflib.Match(len(old), len(new), 0)]

    return Anchored(None, old, new)


def _unique_anchors(old, new):
    """[(i, j)]: lines found once in `old` (at i) and once in `new` (at j), the longest run of them
    whose j ascend with i (patience sorting: the top of each pile, and where each came from)."""
    import bisect

    once_old, once_new = collections.Counter(old), collections.Counter(new)
    at_new = {line: j for j, line in enumerate(new) if once_new[line] == 1}
    pairs = [(i, at_new[line]) for i, line in enumerate(old) if once_old[line] == 1 and line in at_new]
    tops, top_pair, came_from = [], [], []
    for k, (_i, j) in enumerate(pairs):
        pile = bisect.bisect_left(tops, j)
        tops[pile : pile + 1] = [j]
        top_pair[pile : pile + 1] = [k]
        came_from.append(top_pair[pile - 1] if pile else None)
    run, k = [], top_pair[-1] if top_pair else None
    while k is not None:
        run.append(pairs[k])
        k = came_from[k]
    return run[::-1]


def plain_diff(old_lines, new_lines, first):
    """docs/behaviour.md#diffs format "plain": the window before and after, numbered."""
    return "\n".join(
        ["before:", render_numbered(old_lines, first), "after:", render_numbered(new_lines, first)]
    )


# --- double-escaped content (docs/cli.md#write) ---------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def looks_double_escaped(content):
    """Whether `content` holds literal backslash-n sequences outside quoted strings and no line
    break: sent escaped twice. Those inside strings (`{"a":"x\\ny"}`, minified JSON or code) are
    the content's own escapes, not line breaks; a quote after a backslash opens no string. Escaped
    twice, each backslash of the text arrives doubled: one that starts no JSON escape (`\\R`,
    `C:\\data`) shows the text was sent as it is, and so does a `\\f` or `\\b` (escaped twice, it
    stood for a form feed or a backspace: TeX's `\\frac`, `\\bf` are sent as they are). So do
    `\\n` sequences that each start a TeX command after a space or at the start (`\\noindent text
    \\newline more`: _tex_word_at)."""
    if "\n" in content or content.count("\\n") < 2:
        return False
    if any(m.group(1) or m.group(0) in ("\\f", "\\b") for m in _JSON_ESCAPE.finditer(content)):
        return False
    outside = _QUOTED_STRING.sub("", content)
    breaks = [m.start() for m in re.finditer(r"(?<!\\)(?:\\\\)*\\n", outside)]
    if all(_tex_word_at(outside, at) for at in breaks):
        return False
    return outside.count("\\n") >= 2


def _tex_word_at(text, at):
    """Whether the `\\n` at `at` may start a TeX command (`\\newline`, `\\ne`, `\\noindent`): a letter
    follows it, and one space stands before it, or nothing: a line break escaped twice stands
    after a line's text, and Markdown's hard break is two spaces (`line one  \\nline two`)."""
    spaced = at == 0 or (text[at - 1] in " \t" and (at == 1 or text[at - 2] not in " \t"))
    return spaced and text[at + 2 : at + 3].isalpha()


_QUOTED_STRING = _LazyPattern(r"""(?<!\\)"(?:[^"\\\n]|\\.)*"|(?<!\\)'(?:[^'\\\n]|\\.)*'""")
_JSON_ESCAPE = _LazyPattern(r'\\(?:[\\"/bfnrt]|u[0-9a-fA-F]{4})|(\\)')  # (group 1: a backslash starting none)


def unescape_content(content):
    """Decode \\n, \\t, \\r, \\" and \\\\ (other backslashes stay as they are)."""
    return re.sub(r'\\([ntr"\\])', lambda m: _ESCAPES[m.group(1)], content)


# ====================================================================================================
# 5. Diagnostics: the block a wrong `old` was copied from, its first difference, the placeholder guard
# ====================================================================================================

# --- mismatch diagnostics: the closest block and its first difference (docs/behaviour.md#errors) ---
#
# When `old` is not in the file, closest_block() finds the block `old` was most likely copied from
# and names the FIRST difference, so the model can fix its retry mechanically; describe_difference()
# says it in words. Candidates are found on "forgiving" forms of the lines (typographic quotes and
# dashes as ASCII, read prefixes, escapes and whitespace removed, lower case), so doubled escapes or
# read prefixes still find their block; the reported similarity is 2*M/T on the raw lines (matches do
# not cross aligned line boundaries). The search votes for block starts with rare whole lines (then
# line ends, then rare words), scores at most a few dozen windows, and is never quadratic in the size
# of the file: a 5-line old against 200,000 lines answers in tens of milliseconds.


def _sequence_matcher(*args, **kwargs):
    from difflib import SequenceMatcher  # (imported when a mismatch is diagnosed, never at start)

    return SequenceMatcher(*args, **kwargs)


KINDS = (
    "indentation",
    "trailing_whitespace",
    "quotes",
    "escaping",
    "line_numbers",
    "diff_prefixes",
    "case",
    "missing_line",
    "extra_line",
    "text",
)


class Closest:
    """The settings of the closest-block engine (docs/behaviour.md#mismatch-diagnostics): how similar
    a block must be, the budgets that keep the search cheap on large files, how first differences on
    long lines are shown."""

    THRESHOLD = 0.5
    ANCHOR_BUDGET = 5000  # votes that may propose new block starts
    REINFORCE_BUDGET = 100_000  # lookups that may reinforce proposed starts
    RARE = 50  # an anchor line seen at most this often counts as distinctive
    TOP_STARTS = 16  # candidate block starts considered per reading of old
    RECALL = 4.0  # windows are chosen by F-beta, beta = 2: covering all of old outweighs extra file lines
    LINE_WEIGHT = 16  # ... each line also weighs as much as 16 characters, so ")" or "}" lines count
    NOISE_FLOOR = 0.5  # ... and lines less similar than this count as unrelated (no chance matches)
    VERIFY_LIMIT = 40  # windows (of the up to 16 * 9) given the character-level forgiving score
    VERIFY_SCALE = 4000  # ... at most max(4, min(40, VERIFY_SCALE // len(old)))
    TOKEN_LIMIT = 12  # tokens tried by the fallback
    TOKEN_HITS = 200  # a token found more often than this is too common to vote
    AFFIX = 10  # fallback anchors: first / last characters of a forgiving line
    PAIR_COST = 100_000  # a pair is diffed exactly only if it costs at most this many collisions ...
    COST_BUDGET = 300_000  # ... and while the call's budget lasts (collisions: sum count_a[c]*count_b[c])
    LONG = 20_000  # a pair with a longer string is never diffed exactly
    DIFF_OVERHEAD = 100  # what setting up one diff costs, in collisions
    SCALE = 2000  # fewer candidate starts for a long old: max(2, min(16, SCALE // len(old)))
    SCAN_ALL = 1000  # with no anchor at all, every start is tried when file lines x old lines <= this
    SHOWN_LINE = 240  # a longer line of `old` or the file is shown cut ...
    SHOWN_WINDOW, SHOWN_BEFORE = 200, 40  # ... as this many characters from this many before the difference


_TYPO = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
}  # fmt: skip
_FORGIVE_NON_ASCII = tuple(_TYPO.items()) + (("\u00a0", ""), ("\u2009", ""), ("\u202f", ""))
_PREFIX = _LazyPattern(r" *([0-9]{1,15})(\t|\u2192)")  # "12<TAB>" from a numbered read (also "   12→")
_UNESCAPE = _LazyPattern(r"\\([ntr\"'\\])")
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r"}
_TOKEN = _LazyPattern(r"\w{3,}")
_LEAD = _LazyPattern(r"[ \t]*")


# --- normalisations --------------------------------------------------------------------------------


def forgiving(text):
    """The forgiving form of `text` (one line or many joined by "\\n"; line breaks are kept)."""
    if not text.isascii():
        for char, repl in _FORGIVE_NON_ASCII:
            if char in text:
                text = text.replace(char, repl)
    if "\\" in text:
        text = text.replace("\\t", "").replace("\\n", "").replace("\\r", "").replace("\\", "")
    for space in (" ", "\t", "\r", "\f", "\v"):
        if space in text:
            text = text.replace(space, "")
    return text.lower()


def _strip_prefix(line):
    m = _PREFIX.match(line)
    return line[m.end() :] if m else line


def _g(line):
    """Forgiving form used for alignment: read prefix removed too."""
    return forgiving(_strip_prefix(line))


def _unescape(text):
    return _UNESCAPE.sub(lambda m: _ESCAPED.get(m.group(1), m.group(1)), text)


def _trim(line):
    return line[:-1] if line.endswith("\r") else line


def _lead(line):
    return _LEAD.match(line).group(0)


def _first_diff(a, b):
    """Index of the first differing character (len of the shorter if one is a prefix), None if equal."""
    if a == b:
        return None
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


# --- similarity ------------------------------------------------------------------------------------


class _Pairs:
    """Matching characters of pairs of strings: cached, and within a cost budget per call.

    difflib's cost grows with the collisions sum(count_a[c] * count_b[c]) (up to ~500 ns each with its
    recursion) plus a fixed ~40 us per diff. One instance serves a whole closest_block() call. A pair
    dearer than Closest.PAIR_COST, or beyond the call's Closest.COST_BUDGET, is not diffed: it is credited with its
    common prefix plus common suffix, a LOWER bound (exact when the pair differs in one place), so an
    estimate can make a block look less similar but never more.
    """

    def __init__(self):
        self.cache = {}
        self.counters = {}
        self.budget = Closest.COST_BUDGET

    def most(self, a, b):
        """The multiset bound (what quick_ratio uses): at least the matching characters."""
        if len(a) * len(b) <= 64 or max(len(a), len(b)) > Closest.LONG:
            return min(len(a), len(b))
        counts = []
        for text in (a, b):
            counter = self.counters.get(text)
            if counter is None:
                counter = self.counters[text] = collections.Counter(text)
            counts.append(counter)
        small, large = sorted(counts, key=len)
        return sum(min(n, large[c]) for c, n in small.items() if c in large)

    def affordable(self, a, b):
        return max(len(a), len(b)) <= Closest.LONG and _collisions(a, b) <= min(
            Closest.PAIR_COST, self.budget
        )

    def __call__(self, a, b):
        key = (a, b)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        if not a or not b:
            value = 0
        elif a == b:
            value = len(a)
        else:
            cost = (
                _collisions(a, b) + Closest.DIFF_OVERHEAD
                if max(len(a), len(b)) <= Closest.LONG
                else Closest.PAIR_COST + 1
            )
            if cost <= min(Closest.PAIR_COST, self.budget):
                self.budget -= cost
                value = sum(
                    m.size for m in _sequence_matcher(None, a, b, autojunk=False).get_matching_blocks()
                )
            else:
                value = _affix_match(a, b)
        self.cache[key] = value
        return value


def _collisions(a, b):
    if len(a) > len(b):
        a, b = b, a
    if len(a) * len(b) <= 64:
        return len(a) * len(b)
    cb = collections.Counter(b)
    return sum(n * cb[c] for c, n in collections.Counter(a).items() if c in cb)


def _affix_match(a, b):
    """Common prefix + common suffix (not overlapping): a lower bound of the matching characters."""
    head = _first_diff(a, b)
    if head is None:
        return len(a)
    limit = min(len(a), len(b)) - head
    tail = 0
    while tail < limit and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head + tail


def _segments(lines):
    """Lines with their terminator: the units _sim aligns."""
    return [line + "\n" for line in lines]


def _escaped_segments(lines):
    """Segments of an old that holds literal "\\n": split after each literal "\\n" as well (raw kept)."""
    out = []
    for line in lines:
        pieces = line.split("\\n")
        out += [piece + "\\n" for piece in pieces[:-1]]
        if pieces[-1] or len(pieces) == 1:
            out.append(pieces[-1] + "\n")
        else:
            out[-1] += "\n"
    return out


def _matched(a, b, pairs, weight=0.0, floor=0.0):
    """Matching characters of two lists of segments, aligned in two levels (see the module docstring).

    For choosing a block (not for the reported similarity) each segment also weighs `weight`, credited
    in proportion to how much of the longer side matches, and a pair less than `floor` similar counts
    as unrelated (no credit): unrelated lines match some characters by chance.
    """

    def credit(x, y, count=1):
        m = pairs(x, y)
        if floor and 2.0 * m < floor * (len(x) + len(y)):
            return 0.0
        return m + weight * count * m / max(len(x), len(y), 1)

    matched = 0.0
    for tag, i1, i2, j1, j2 in _sequence_matcher(None, a, b).get_opcodes():
        if tag == "equal":
            matched += sum(map(len, a[i1:i2])) + weight * (i2 - i1)
        elif tag == "replace":
            if i2 - i1 == j2 - j1:
                matched += sum(credit(a[i1 + k], b[j1 + k]) for k in range(i2 - i1))
                continue
            joined_a, joined_b = "".join(a[i1:i2]), "".join(b[j1:j2])
            size = min(i2 - i1, j2 - j1)
            if pairs.affordable(joined_a, joined_b):
                matched += credit(joined_a, joined_b, size)
            else:  # pair segments by position, from the start or from the end, whichever matches more
                head = sum(credit(a[i1 + k], b[j1 + k]) for k in range(size))
                tail = sum(credit(a[i2 - 1 - k], b[j2 - 1 - k]) for k in range(size))
                matched += max(head, tail)
    return matched


def _matched_bound(a, b, opcodes, pairs, weight=0.0, floor=0.0):
    """An upper bound of _matched(a, b, pairs, weight, floor) given the segment alignment `opcodes`."""

    def most(x, y, count=1):
        m = pairs.most(x, y)
        if floor and 2.0 * m < floor * (len(x) + len(y)):
            return 0.0
        return m + weight * count * m / max(len(x), len(y), 1)

    matched = 0.0
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            matched += sum(map(len, a[i1:i2])) + weight * (i2 - i1)
        elif tag == "replace":
            if i2 - i1 == j2 - j1:
                matched += sum(most(a[i1 + k], b[j1 + k]) for k in range(i2 - i1))
            else:
                joined_a, joined_b = "".join(a[i1:i2]), "".join(b[j1:j2])
                size = min(i2 - i1, j2 - j1)
                matched += max(
                    most(joined_a, joined_b, size), min(len(joined_a), len(joined_b)) + weight * size
                )
    return matched


def _score(matched, a, b, recall=1.0, weight=0.0):
    """(1 + w) * M / (|a| + w * |b|), |x| = characters + weight per segment: w = 1 is the symmetric
    ratio 2M/T; w > 1 weighs covering b (old) more than a's extra characters (F-beta, beta^2 = w)."""
    total = sum(map(len, a)) + weight * len(a) + recall * (sum(map(len, b)) + weight * len(b))
    return 1.0 if total == 0 else (1.0 + recall) * matched / total


def _sim(a, b, pairs):
    """Symmetric two-level similarity 2M/T of two lists of segments."""
    return _score(_matched(a, b, pairs), a, b)


def block_similarity(old_lines, block_lines):
    """The reported similarity of two lists of lines (unrounded)."""
    old = [_trim(s) for s in old_lines]
    return _sim(_segments(old), _segments([_trim(s) for s in block_lines]), _Pairs())


# --- search ----------------------------------------------------------------------------------------


class _File:
    """The file's forgiving lines, computed once per call, plus lazily built helpers."""

    def __init__(self, lines):
        self.lines = lines
        text = forgiving("\n".join(lines))
        flines = text.split("\n")
        if len(flines) != len(lines):  # a "line" held a newline: normalise line by line
            flines = [forgiving(s.replace("\n", " ")) for s in lines]
            text = "\n".join(flines)
        self.text = text
        self.flines = flines
        self._starts = None
        self._g = {}

    def g(self, index):
        value = self._g.get(index)
        if value is None:
            line = self.lines[index]
            value = self.flines[index] if _PREFIX.match(line) is None else _g(line)
            self._g[index] = value
        return value

    def line_of_offset(self, offset):
        from bisect import bisect_right

        if self._starts is None:
            self._starts = [0, *itertools.accumulate(len(s) + 1 for s in self.flines)]
        return bisect_right(self._starts, offset) - 1


class _Votes:
    """Votes for block starts: weighted by rarity (idf, log((N + 1) / hits)), and counted."""

    def __init__(self, total):
        self.weight = collections.Counter()
        self.count = collections.Counter()
        self.total = total

    def idf(self, hits):
        from math import log

        return log((self.total + 1) / max(hits, 1)) + 0.1

    def add(self, start, weight):
        self.weight[start] += weight
        self.count[start] += 1

    def agreeing(self):
        return max(self.count.values(), default=0)


def _cast(positions, keys, votes):
    """Votes from anchor positions; True if some anchor was rare (seen at most Closest.RARE times).

    Rarest key first; keys proposing new starts stop at Closest.ANCHOR_BUDGET votes (the first key at four times
    that), later keys only reinforce starts already proposed (within Closest.REINFORCE_BUDGET lookups), so
    common lines ("}", "return None") still tell which candidates agree without flooding the list.
    """
    used, reinforced, distinctive = 0, 0, False
    for key in sorted(positions, key=lambda k: (len(positions[k]), k)):
        found, ks = positions[key], keys[key]
        distinctive = distinctive or len(found) <= Closest.RARE
        cost, weight = len(found) * len(ks), votes.idf(len(found))
        if not used or used + cost <= Closest.ANCHOR_BUDGET:
            for p in found[: max(1, 4 * Closest.ANCHOR_BUDGET // len(ks))]:
                for k in ks:
                    votes.add(p - k, weight)
            used += cost
        elif reinforced + cost <= Closest.REINFORCE_BUDGET:
            reinforced += cost
            proposed = votes.weight
            for k in ks:
                for s in [p - k for p in found if p - k in proposed]:
                    votes.add(s, weight)
    return distinctive


def _anchor_votes(file, old, votes):
    """Whole-line anchors: file lines equal to a forgiving form of a line of old."""
    keys = {}
    for k, line in enumerate(old):
        for key in {forgiving(line), _g(line)}:
            if key:
                keys.setdefault(key, []).append(k)
    positions = {}
    if keys:
        flines = file.flines
        for i in [i for i, s in enumerate(flines) if s in keys]:
            positions.setdefault(flines[i], []).append(i)
    return _cast(positions, keys, votes)


def _affix_votes(file, old, votes):
    """Fallback anchors: a typo rarely hits both ends of a line, so match first / last characters."""
    heads, tails = {}, {}
    for k, line in enumerate(old):
        for key in {forgiving(line), _g(line)}:
            if len(key) > Closest.AFFIX + 2:
                heads.setdefault(key[: Closest.AFFIX], []).append(k)
                tails.setdefault(key[-Closest.AFFIX :], []).append(k)
    if not heads:
        return False
    found_heads, found_tails = {}, {}
    flines = file.flines
    for i in [i for i, s in enumerate(flines) if s[: Closest.AFFIX] in heads or s[-Closest.AFFIX :] in tails]:
        line = flines[i]
        if line[: Closest.AFFIX] in heads:
            found_heads.setdefault(line[: Closest.AFFIX], []).append(i)
        if line[-Closest.AFFIX :] in tails:
            found_tails.setdefault(line[-Closest.AFFIX :], []).append(i)
    positions = {("h", k): v for k, v in found_heads.items()}
    positions.update({("t", k): v for k, v in found_tails.items()})
    keys = {("h", k): v for k, v in heads.items()}
    keys.update({("t", k): v for k, v in tails.items()})
    return _cast(positions, keys, votes)


def _token_votes(file, old, votes):
    """Last fallback: rare word tokens of old, found with str.find in the forgiving text; when old
    holds no word of 3 characters (`b = 3`), its shorter words, found as whole words."""
    where, short = {}, False
    for k, line in enumerate(old):
        for token in set(_TOKEN.findall(_strip_prefix(line).lower())):
            where.setdefault(token, set()).add(k)
    if not where:
        short = True
        for k, line in enumerate(old):
            for token in set(re.findall(r"\w+", _strip_prefix(line).lower())):
                where.setdefault(token, set()).add(k)
    text = file.text
    for token in sorted(where, key=lambda t: (-len(t), t))[: Closest.TOKEN_LIMIT]:
        hits = _token_hits(text, token, short)
        if hits is None and not short:  # (common inside longer words: `value_5` in `value_50`)
            hits = _token_hits(text, token, True)
        if hits is None:
            continue
        found = {file.line_of_offset(at) for at in hits}
        weight = votes.idf(len(found))
        for line in found:
            for k in where[token]:
                votes.add(line - k, weight)


def _token_hits(text, token, whole):
    """Offsets of `token` in `text` (`whole`: as a whole word), None when it is found more often
    than Closest.TOKEN_HITS (too common to vote)."""
    if whole:
        found = re.compile(rf"(?<!\w){re.escape(token)}(?!\w)").finditer(text)
        hits = [m.start() for _, m in zip(range(Closest.TOKEN_HITS + 1), found)]
    else:
        hits, at = [], text.find(token)
        while at >= 0 and len(hits) <= Closest.TOKEN_HITS:
            hits.append(at)
            at = text.find(token, at + 1)
    return None if len(hits) > Closest.TOKEN_HITS else hits


def _windows(file, old, pairs, fallback=True):
    """([(forgiving score, a, b)] for candidate windows lines[a:b], best first; whether anchors located
    old). `fallback` False skips the affix and token fallbacks."""
    n, total = len(old), len(file.lines)
    votes = _Votes(total)

    def located(distinctive):  # a rare anchor, or at least half of old's lines agree on a start
        return distinctive or votes.agreeing() >= (1 if n == 1 else max(2, n / 2))

    found = located(_anchor_votes(file, old, votes))
    if not found and fallback and not _affix_votes(file, old, votes):
        _token_votes(file, old, votes)
    weights = votes.weight
    if weights:

        def smoothed(s):
            return (weights[s] + 0.5 * (weights.get(s - 1, 0) + weights.get(s + 1, 0)), -s)

        from heapq import nlargest

        starts = nlargest(max(2, min(Closest.TOP_STARTS, Closest.SCALE // n)), weights, key=smoothed)
    elif fallback and total * n <= Closest.SCAN_ALL:  # nothing to anchor on (`}`, `b = 3`): a small file is
        starts = range(total)  # tried at every start, ranked by the same bound below
    else:
        return [], found
    spans = {}  # (a, b) -> rank of the start that proposed it
    for rank, s in enumerate(starts):
        for a in (s - 1, s, s + 1):
            for size in (n - 1, n, n + 1):
                lo = min(max(a, 0), total - 1)
                hi = min(total, lo + size)
                if size >= 1 and hi > lo:
                    spans.setdefault((lo, hi), rank)
    gold = _segments([_g(s) for s in old])
    # Rank windows by an upper bound of the forgiving score (same line alignment, each replaced pair
    # credited with its multiset bound), then verify in that order until no bound can beat the best.
    # The forgiving score is F-beta (beta = 2) of the window against old, so that a window holding all
    # of old plus a line old skipped beats one holding part of old and nothing else.
    matcher = _sequence_matcher(None, [], gold)
    bounded = []
    for (a, b), rank in spans.items():
        window = _segments([file.g(i) for i in range(a, b)])
        matcher.set_seq1(window)
        bound = _matched_bound(
            window, gold, matcher.get_opcodes(), pairs, Closest.LINE_WEIGHT, Closest.NOISE_FLOOR
        )
        bound = _score(bound, window, gold, Closest.RECALL, Closest.LINE_WEIGHT)
        bounded.append((rank > 0, -bound, rank, a, b, window))
    bounded.sort(key=lambda t: t[:5])  # the best-voted start's windows first, then by bound
    scored, best = [], 0.0
    for later, negative_bound, _, a, b, window in bounded[
        : max(4, min(Closest.VERIFY_LIMIT, Closest.VERIFY_SCALE // n))
    ]:
        if later and -negative_bound < best - 0.001:
            break
        matched = _matched(window, gold, pairs, Closest.LINE_WEIGHT, Closest.NOISE_FLOOR)
        score = _score(matched, window, gold, Closest.RECALL, Closest.LINE_WEIGHT)
        best = max(best, score)
        scored.append((score, a, b))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    return scored, found


def _expand(old):
    """`old` read as double-escaped text: (lines, origin of each line in old), or None."""
    if not any("\\n" in line for line in old):
        return None
    lines, origin = [], []
    for i, line in enumerate(old):
        pieces = _unescape(line).split("\n") if "\\n" in line else [line]
        lines += pieces
        origin += [i] * len(pieces)
    if len(lines) > 1 and lines[-1] == "" and old[-1].endswith("\\n"):
        lines.pop()
        origin.pop()
    if len(lines) <= len(old):
        return None
    return lines, origin


# --- the first difference ----------------------------------------------------------------------------


def _escape_at(e, a, c):
    """Column (0-based) of an escape sequence explaining the difference at c, or None."""
    for s, o in ((e, a), (a, e)):
        if c < len(s) and s[c] == "\\":
            c0 = c
            while c0 > 0 and s[c0 - 1] == "\\":
                c0 -= 1
            piece = (s[:c0] + _unescape(s[c0:])).split("\n", 1)[0]
            d = _first_diff(piece, o.split("\n", 1)[0])
            if d is None or d > c0:
                return c0
    return None


def _difference_kind(e, a):
    """(kind, 0-based column) of the first difference of two raw lines, None if they are equal."""
    c = _first_diff(e, a)
    if c is None:
        return None
    m = _PREFIX.match(e)
    if m and (_PREFIX.match(a) is None or e[m.end() :] == a):
        return "line_numbers", c
    le, la = _lead(e), _lead(a)
    if not e.strip(" \t") and not a.strip(" \t"):
        return "trailing_whitespace", c
    if le != la and c <= min(len(le), len(la)) and e[len(le) : len(le) + 1] == a[len(la) : len(la) + 1]:
        return "indentation", c  # (content starting differently right away is a different line: text)
    if e.rstrip(" \t") == a.rstrip(" \t"):
        return "trailing_whitespace", c
    ce = e[c] if c < len(e) else ""
    ca = a[c] if c < len(a) else ""
    if ce and ca and (ce in _TYPO or ca in _TYPO) and _TYPO.get(ce, ce) == _TYPO.get(ca, ca):
        return "quotes", c
    if "\\" in (ce, ca):
        c0 = _escape_at(e, a, c)
        if c0 is not None:
            return "escaping", c0
    if ce and ca and ce.casefold() == ca.casefold():
        return "case", c
    return "text", c


def _difference(kind, line, column, expected, actual):
    """A first difference as its dict; over-long lines keep Closest.SHOWN_WINDOW characters from
    Closest.SHOWN_BEFORE ahead of `column`, and "shown_from" gives the column of their first
    character (`column` stays the whole line's)."""
    found = {"line": line, "column": column, "expected": expected, "actual": actual, "kind": kind}
    if max(len(expected or ""), len(actual or "")) > Closest.SHOWN_LINE:
        a = 0 if kind in ("indentation", "line_numbers") else max(0, column - 1 - Closest.SHOWN_BEFORE)
        b = a + Closest.SHOWN_WINDOW
        found.update(expected=expected and expected[a:b], actual=actual and actual[a:b], shown_from=a + 1)
    return found


def _pair(e, a, line):
    found = _difference_kind(e, a)
    if found is None:
        return None
    kind, c = found
    return _difference(kind, line, c + 1, e, a)


def _first_difference(old, block, start, pairs, inside=False):
    """(index in old, difference dict) of the first difference, or (None, None) (`inside`: old was
    searched for: _searched_from)."""
    if _diff_prefixed(old, block):
        return 0, _difference("diff_prefixes", start, 1, old[0], block[0])
    old = _searched_from(old, block) if inside else old
    go, gb = [_g(s) for s in old], [_g(s) for s in block]
    for tag, i1, i2, j1, j2 in _sequence_matcher(None, go, gb).get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                found = _pair(old[i1 + k], block[j1 + k], start + j1 + k)
                if found:
                    return i1 + k, found
            continue
        if tag == "delete":
            return i1, _difference("missing_line", start + j1, 1, old[i1], None)
        if tag == "insert":
            return i1, _difference("extra_line", start + j1, 1, None, block[j1])
        # replace: the first lines differ even forgivingly, unless a line is absent just there
        here = pairs(go[i1], gb[j1])
        if i2 - i1 > j2 - j1 and pairs(go[i1 + 1], gb[j1]) > here:
            return i1, _difference("missing_line", start + j1, 1, old[i1], None)
        if j2 - j1 > i2 - i1 and pairs(go[i1], gb[j1 + 1]) > here:
            return i1, _difference("extra_line", start + j1, 1, None, block[j1])
        return i1, _pair(old[i1], block[j1], start + j1) or _difference(
            "text", start + j1, 1, old[i1], block[j1]
        )
    return None, None


def _searched_from(old, block):
    """`old` as a search by it reads the block: its first line may start anywhere in the block's
    first line (`x:` of `    if x:`, `return x` without the indentation), at the start of a word,
    so it gets what stands there before it (shown so in `expected`): that is no difference."""
    if not (old and block and old[0].strip()):
        return old
    e, a = old[0], block[0]
    n = _prefix_found(e, a)
    found = e[:n]  # (more than spaces: those alone match the alignment inside a line)
    at = a.find(found) if (n == len(e) or n >= 3) and found.strip() else -1
    if at > 0 and not (a[at - 1].isalnum() and e[0].isalnum()):  # (not inside a word)
        return [a[:at] + e, *old[1:]]
    return old


def _prefix_found(e, a):
    """The length of the longest start of `e` that stands in `a`."""
    low, high = 0, len(e)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if e[:middle] in a else (low, middle - 1)
    return low


def _diff_prefixed(old, block):
    """Whether `old` was copied from a diff with its `' '`, `+` and `-` columns: every line starts
    with one of them, some with `+` or `-`, and without that column most of its lines are lines of
    `block` (a model reading a diff it was shown)."""
    theirs = {line.rstrip() for line in block}
    changed = [line.rstrip() for line in old if line[:1] in "+-"]
    if len(old) < 2 or not changed or not all(line[:1] in (" ", "+", "-") for line in old):
        return False
    listed = not theirs.isdisjoint(changed)  # (`- apples` of a list stands in the file as it is)
    return not listed and 2 * sum(line[1:].rstrip() in theirs for line in old) > len(old)


def _expanded_first_difference(raw_old, expanded, block, start, pairs, inside=False):
    lines, origin = expanded
    index, found = _first_difference(lines, block, start, pairs, inside)
    i = next(k for k, line in enumerate(raw_old) if "\\n" in line)
    e0 = origin.index(i)
    j = min(e0, len(block) - 1)
    go, gb = [_g(s) for s in lines], [_g(s) for s in block]
    for _tag, i1, i2, j1, j2 in _sequence_matcher(None, go, gb).get_opcodes():
        if i1 <= e0 < i2:
            j = min(j1 + min(e0 - i1, max(j2 - j1 - 1, 0)), len(block) - 1)
            break
    if found is not None and (index < e0 or found["line"] < start + j):
        return found
    e = _searched_from([raw_old[i]], [block[j]])[0] if inside and i == 0 else raw_old[i]
    return _pair(e, block[j], start + j) or found


# --- the entry point --------------------------------------------------------------------------------


def closest_block(lines, old_lines, inside=False):
    """The block of `lines` most like `old_lines` and their first difference, or None (< 0.5 similar).
    `inside`: old was searched for, so its first line may start after a line's indentation.

    Both lists hold lines WITHOUT terminators. Result: {"start", "end" (1-based inclusive),
    "similarity" (rounded to 2 decimals), "first_difference" ({"line", "column", "expected",
    "actual", "kind"} + "shown_from" for cut long lines, or None if the block equals old)}.
    """
    if not lines or not old_lines:
        return None
    raw_old = [_trim(s) for s in old_lines]
    file = _File(lines)
    scored, pairs = [], _Pairs()
    expanded = _expand(raw_old)
    located = False
    if expanded is not None:  # read double-escaped first: if that locates old, skip the raw fallbacks
        windows, located = _windows(file, expanded[0], pairs)
        scored += [(score, a, b, expanded) for score, a, b in windows[:6]]
    windows, _ = _windows(file, raw_old, pairs, fallback=not located)
    scored += [(score, a, b, None) for score, a, b in windows[:6]]
    if not scored:
        return None
    best_score = max(round(t[0], 3) for t in scored)
    best = None
    for score, a, b, exp in scored:
        if round(score, 3) != best_score:
            continue
        old_segments = _segments(raw_old) if exp is None else _escaped_segments(raw_old)
        raw = _sim(old_segments, _segments([_trim(s) for s in lines[a:b]]), pairs)
        key = (raw, -a, -b)
        if best is None or key > best[0]:
            best = (key, a, b, exp)
    (raw, _, _), a, b, exp = best
    if raw < Closest.THRESHOLD:
        return None
    block = [_trim(s) for s in lines[a:b]]
    if exp is None:
        found = _first_difference(raw_old, block, a + 1, pairs, inside)[1]
    else:
        found = _expanded_first_difference(raw_old, exp, block, a + 1, pairs, inside)
    similarity = round(raw, 2)
    if similarity == 1 and found is not None:
        similarity = 0.99  # (1.0 only for an identical block: a difference was found)
    return {"start": a + 1, "end": b, "similarity": similarity, "first_difference": found}


# --- words ------------------------------------------------------------------------------------------
# The first difference in words, from MESSAGES in both languages (keys diff.*). The fragments a
# sentence holds (whitespace runs, characters, quotes) are worded in the same language.


def _quote(text, limit=60):
    if len(text) > limit:
        return repr(text[: limit - 1]) + "…"
    return repr(text)


def _ws_words(lang, ws):
    """A run of spaces and tabs in words: "4 spaces", "a tab and 2 spaces"."""
    runs = []
    for ch, group in itertools.groupby(ws):
        n, unit = len(list(group)), {" ": "space", "\t": "tab"}.get(ch, "char")
        runs.append(tr(lang, f"diff.{'one' if n == 1 else 'many'}.{unit}", n=n, char=repr(ch)))
    if len(runs) <= 2:
        return tr(lang, "diff.and").join(runs)
    return tr(lang, "diff.comma").join(runs[:-1]) + tr(lang, "diff.and") + runs[-1]


_CHAR_WORDS = {"\n": "newline", "\t": "tab", "\r": "return", "\\": "backslash", "": "end"}


def _char_words(lang, text):
    return tr(lang, "diff.char." + _CHAR_WORDS[text]) if text in _CHAR_WORDS else text


def _typo_words(lang, ch, side):
    if ch not in _TYPO:
        return ch
    sort = tr(lang, "diff.sort." + ("dash" if _TYPO[ch] == "-" else "quote"))
    return tr(lang, "diff.typo." + side, sort=sort, char=ch)


def _excerpt(text, at):
    """`text` quoted from the start of the word holding the difference at `at`; in a long word,
    from a few characters before the difference, after "…" (from the word's start, both sides
    showed the same 29 characters)."""
    start = at
    while 0 < start <= len(text) and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    if at - start > 12:
        return "…" + _quote(text[at - 8 :], 30)
    return _quote(text[start:], 30)


def describe_difference(first_difference, lang="en"):
    """One line of words for a `first_difference` (None: old matches exactly), in `lang`."""
    d = first_difference
    if d is None:
        return tr(lang, "diff.none")
    e, a = d["expected"], d["actual"]
    c = d["column"] - d.get("shown_from", 1)  # 0-based, in the shown part of long lines
    at = tr(lang, "diff.at", line=d["line"], column=d["column"])
    return _DESCRIBE[d["kind"]](lang, d["line"], at, e, a, c)


def _describe_extra(lang, line, at, e, a, c):  # (named from the file's side: a line old lacks)
    if not a.strip():
        return tr(lang, "diff.extra_blank", line=line)
    return tr(lang, "diff.extra", line=line, text=_quote(a))


def _describe_missing(lang, line, at, e, a, c):  # old expects a line the file is missing
    if not e.strip():
        return tr(lang, "diff.missing_blank", line=line)
    return tr(lang, "diff.missing", line=line, text=_quote(e))


def _describe_line_numbers(lang, line, at, e, a, c):
    m = _PREFIX.match(e or "")
    number, sep = (m.group(1), "<TAB>" if m.group(2) == "\t" else m.group(2)) if m else ("N", "<TAB>")
    return tr(lang, "diff.line_numbers", line=line, number=number, sep=sep)


def _describe_diff_prefixes(lang, line, at, e, a, c):
    return tr(lang, "diff.diff_prefixes", line=line)


def _describe_indentation(lang, line, at, e, a, c):
    ours, theirs = _ws_words(lang, _lead(e)), _ws_words(lang, _lead(a))
    key = "diff.indent_none_old" if not ours else "diff.indent_none_file" if not theirs else "diff.indent"
    return tr(lang, key, at=at, ours=ours, theirs=theirs)


def _describe_trailing(lang, line, at, e, a, c):
    if not e.strip(" \t") and not a.strip(" \t"):
        nothing = tr(lang, "diff.nothing")
        ours, theirs = _ws_words(lang, e) or nothing, _ws_words(lang, a) or nothing
        return tr(lang, "diff.blank_ws", at=at, ours=ours, theirs=theirs)
    ours = _ws_words(lang, e[len(e.rstrip(" \t")) :])
    theirs = _ws_words(lang, a[len(a.rstrip(" \t")) :])
    key = "diff.trail_old" if not theirs else "diff.trail_file" if not ours else "diff.trail"
    return tr(lang, key, at=at, ours=ours, theirs=theirs)


def _describe_quotes(lang, line, at, e, a, c):
    ours, theirs = _typo_words(lang, e[c : c + 1], "old"), _typo_words(lang, a[c : c + 1], "file")
    return tr(lang, "diff.has", at=at, ours=ours, theirs=theirs)


def _describe_escaping(lang, line, at, e, a, c):
    old_escapes = c < len(e) and e[c] == "\\"
    s = e if old_escapes else a
    end = c
    while end < len(s) and s[end] == "\\":
        end += 1
    seq = s[c : end + 1]
    meant = _char_words(lang, _unescape(seq))
    return tr(lang, "diff.escaped_old" if old_escapes else "diff.escaped_file", at=at, seq=seq, meant=meant)


def _describe_case(lang, line, at, e, a, c):
    ours = re.match(r"\w*", e[c:]).group(0) or e[c : c + 1]
    theirs = re.match(r"\w*", a[c:]).group(0) or a[c : c + 1]
    return tr(lang, "diff.case", at=at, ours=_quote(ours), theirs=_quote(theirs))


def _describe_text(lang, line, at, e, a, c):
    if c >= len(e):
        return tr(lang, "diff.old_ends", at=at, theirs=_excerpt(a, c))
    if c >= len(a):
        return tr(lang, "diff.file_ends", at=at, ours=_excerpt(e, c))
    return tr(lang, "diff.has", at=at, ours=_excerpt(e, c), theirs=_excerpt(a, c))


_DESCRIBE = {
    "extra_line": _describe_extra, "missing_line": _describe_missing, "line_numbers": _describe_line_numbers,
    "diff_prefixes": _describe_diff_prefixes,
    "indentation": _describe_indentation, "trailing_whitespace": _describe_trailing, "quotes": _describe_quotes,
    "escaping": _describe_escaping, "case": _describe_case, "text": _describe_text,
}  # fmt: skip


# --- placeholder guard: "// ... existing code ..." would delete what it stands for (docs/cli.md#replace)
#
# Models asked for a whole block sometimes answer with a comment standing in for the code they did not
# repeat. A line is a strong sign (an ellipsis with an explicit phrase: "// ... existing code ...") or
# a weak one (a bare "// ...", a phrase without an ellipsis: "# rest unchanged"), and a weak one under
# an ordinary comment line opening with the same character belongs to that comment. Tuned on ~19.7
# million lines of real code and documentation: no ordinary comment containing "..." fires.


_W = r"[^\W\d_][\w'’-]*"  # a word; below, what the left-out code is called: mass nouns and plurals only
_NOUN = (
    r"(?:code|implementation|impl|logic|contents?|markup|html|css|jsx|config|configuration|setup|stuff|body|template"
    r"|functionality|middleware|(?:method|function|field|prop|propertie|import|export|style|rule|test|case|route|handler"
    r"|setting|option|classe|component|section|definition|declaration|statement|querie|column|table|helper|hook|member"
    r"|interface|variable|constant|dependencie|script|endpoint|view|model|schema|partial|selector|listener|callback"
    r"|util|doc|migration|element|type|call|part|step|branche|entrie|item|argument|param|attribute|check|command"
    r"|action|event|arm|block|line|assignment)s)"
)
_BE = (
    r"(?:is|are|remains?|stays?|kept|is\s+kept|are\s+kept|left|goes|go|(?:will|should)\s+(?:remain|stay|be))"
)
_STATE = (
    rf"(?:(?:{_BE}\s+)?(?:unchanged|untouched|intact|identical|as[ -]is|as\s+before|as\s+(?:it|they)\s+(?:is|are|was|were))"
    rf"|(?!is|are){_BE}\s+(?:the\s+)?same)"
)
_REST = rf"(?:the\s+)?rest(?:\s+of\s+(?:the\s+|this\s+|your\s+|my\s+)?{_W}(?:\s+{_W})?)?"
_OLD = rf"(?:{_REST}|everything(?:\s+(?:else|below|above|after\s+this|from\s+here(?:\s+on)?))?|(?:existing|original|previous|other|remaining|current|old)\s+(?:{_W}\s+){{0,2}}{_NOUN})"
_SUBJ = rf"(?:(?:(?:all|any|your|my|the)\s+)?(?:{_OLD}|{_NOUN})|all\s+else)"
_CORE = _LazyPattern(  # an explicit phrase: a weak sign alone, a strong one with an ellipsis
    rf"(?:(?:todo|note|fixme)\s*:?\s*)?(?:(?:and|plus|then)\s+)?(?:{_SUBJ}(?:\s+(?:below|above|here))?\s+{_STATE}"
    r"(?:\s+(?:as\s+before|here|below))?"
    rf"|(?:{_REST}|everything(?:\s+else)?|all\s+else)\s+(?:stays?|remains?)"
    r"|(?:other|remaining)\s+(?:[^\W\d_][\w'’-]*\s+){1,3}(?:unchanged|untouched|intact|as\s+before)"
    rf"|(?:{_REST}|everything(?:\s+else)?|all\s+else)\s+(?:is|are)\s+(?:the\s+)?same(?:\s+as\s+before)?"
    r"|(?:other|remaining|existing|previous|original|old)\s+(?:functions|methods|classes|components|definitions)"
    r"\s+(?:remain|stay)s?(?:\s+(?:here|below|above))?"
    rf"|(?:(?:all|your)\s+)?(?:unchanged|existing)(?:\s+(?:{_W}\s+){{0,2}}{_NOUN})?(?:\s+(?:here|below|above|goes\s+here"
    rf"|continues|follows))?|(?:original|previous|old)\s+(?:{_W}\s+)?{_NOUN}\s+(?:goes\s+)?here|(?:keep|keeping|preserve"
    rf"|retain|leave)\s+(?:all\s+|the\s+|your\s+|any\s+)?(?:{_OLD}(?:\s+(?:{_STATE}|here|below|the\s+same))?|{_SUBJ}\s+"
    rf"(?:{_STATE}|the\s+same))|(?:same|identical)\s+as\s+(?:before|(?:in\s+)?the\s+original|original|existing)"
    rf"|(?:(?:(?:other|remaining)\s+)?{_NOUN}\s+|(?:others?|{_REST}|remainder)\s+)?omitted\s+for\s+brevity"
    rf"|(?:(?:other|remaining)\s+)?{_NOUN}\s+omitted|(?:others|{_REST}|remainder)\s+omitted"
    rf"|(?:the\s+)?rest\s+of\s+(?:the\s+|this\s+|your\s+)?(?:{_NOUN}|file|function|method|component|class|module|page"
    rf"|script)(?:\s+{_NOUN})?|unchanged|<?snip(?:ped)?>?|no\s+other\s+changes"
    r"|no\s+(?:other\s+)?changes\s+(?:below|above|here|elsewhere|to\s+the\s+rest)(?:\s+this\s+line)?"
    r"|keep(?:ing)?\s+(?:the\s+)?existing|leave\s+(?:the\s+rest|everything(?:\s+else)?)\s+(?:alone|as[ -]is|unchanged)"
    r"|(?:其余|其他|其它|剩余|现有|原有|原来|之前|以前)的?[\u4e00-\u9fff]{0,6}(?:代码|实现|逻辑|内容|部分|方法|函数)[\u4e00-\u9fff]{0,6}"
    r"|既存の?[\u3040-\u30ff\u4e00-\u9fff]{0,6}|[\u3040-\u30ff\u4e00-\u9fff]{0,10}(?:不变|省略|同上|略|変更なし|同様)[。.]?)",
    re.I,
)
# Looser, only beside an ellipsis ("// other methods...") or after a leading one ("# ... imports": "…" below).
_LOOSE = _LazyPattern(
    rf"(?:… )?(?:(?:{_REST}|(?:other|more|remaining|previous|original|existing)\s+(?:{_W}\s+){{0,2}}"
    rf"{_NOUN})(?:\s+here)?|(?:{_W}\s+){{0,4}}(?:sin\s+cambios|permanecen?\s+igual(?:es)?|sem\s+altera"
    rf"[cç][oõ]es|inchang[ée]e?s?|unver[äa]ndert)|其余|其他|其它|原有|现有)|… (?:(?:{_W}\s+)?{_NOUN}|and\s+so\s+on"
    r"|omitted)",
    re.I,
)
# Looser still, only after a leading ellipsis ("// ... other match arms unchanged", "# ... same as
# above"): an ordinary comment ends with its ellipsis ("# Other transport exceptions..."), a
# placeholder starts with one.
_ANY = r"[^\s]+"  # a word of such a phrase: `@param`, `\\newcommand`, `env`
_AFTER_ELLIPSIS = _LazyPattern(
    rf"(?:(?:all\s+)?(?:the\s+)?(?:other|more|remaining|previous|original|existing|current)\s+(?:{_ANY}\s+){{0,3}}{_ANY}"
    rf"(?:\s+(?:here|{_STATE}|remains?|(?:remain|stay)s?\s+the\s+same))?"
    rf"|(?:the\s+)?same(?:\s+{_ANY}){{0,2}}(?:\s+as\s+(?:above|before|below|(?:the\s+)?original))?"
    rf"|identical(?:\s+to\s+(?:the\s+)?original)?|(?:the\s+)?remaining\s+code\s+is\s+identical"
    rf"|(?:(?:\d+|{_W})\s+)?(?:more\s+)?lines(?:\s+omitted)?|unchanged\s+lines|(?:{_ANY}\s+){{1,4}}unchanged"
    rf"|etc\.?(?:\s+\(?unchanged\)?)?|(?:{_W}\s+){{0,2}}(?:code\s+)?omitted(?:\s+for\s+brevity)?"
    rf"|(?:and\s+)?(?:the\s+)?rest|everything(?:\s+else)?|no\s+(?:other\s+)?changes?|(?:the\s+)?code\s+continues"
    rf"|truncated|(?:the\s+)?code\s+from\s+before|implementation\s+details"
    rf"|keep(?:ing)?\s+(?:(?:all|the|any)\s+)?(?:existing|remaining|rest|other|previous|original|current)"
    rf"(?:\s+{_ANY}){{0,4}})",
    re.I,
)
_ELL = _LazyPattern(r"(?<!\.)\.{3,4}(?!\.)|…+|\. \. \.|···|⋯")
_LINE = _LazyPattern(
    r"\s*(?:(#+|//+!?|/\*+!?|<!--+|--+|;+|%+|\{\s*/\*+|\{#|\{\{!--|\(\*|\*(?=[ \t]))(.*?)(?:\*+/\s*\}?|--+>|--\}\}"
    r"|#\}|\*\))?|((?:[\[(]\s*)?(?:\.{3}|…).*?|[\[(].*?(?:\.{3}|…)\s*[\])]))\s*"
)
_CAND = _LazyPattern(
    r"^[ \t]*(?:[#;%{(\[]|//|/\*|\* |<!--|--|\.{3}|…|pass[ \t]*;?[ \t]*#).*", re.M
)  # comments, ellipses, stubs with a comment: maybe one
# A stub with a comment after it ("pass  # rest unchanged", "...  // other methods") is judged by its
# comment: the stub stands where the code it names went.
_STUB = _LazyPattern(r"([ \t]*)(?:pass|\.{3}|…)[ \t]*;?[ \t]*(?=#|//)")


def _comment_of(line):
    """`line` without the stub statement before its comment (_STUB), indented as it was."""
    m = _STUB.match(line)
    return m.group(1) + line[m.end() :] if m else line


_PLACEHOLDER_WORDS = _LazyPattern(
    r"\.\.\.|…|\. \. \.|unchanged|untouched|intact|as.is|as before|as it was|same|identical|existing|original"
    r"|previous|old|rest|everything|omitted|change|snip|remain|stay|truncated|more|···|⋯|igual|cambios|altera|inchang|unver"
    r"|不变|略|同上|其|剩余|现有|原有|原来|之前|以前|既存|変更なし|同様"
)
# Functions named as kept: "# g() unchanged", "// b(), c() as before", "# Keep g() as is"; not a
# call of an object's (`# os.getcwd() unchanged`: a test's comment on what it checks).
_CALLS_KEPT = _LazyPattern(
    r"(?:keep\s+)?[\w$]+\(\)(?:\s*,\s*[\w$]+\(\)|\s+and\s+[\w$]+\(\))*\s+(?:(?:is|are|remains?|stays?)\s+)?"
    r"(?:unchanged|untouched|intact|as[ -]is|as\s+before|the\s+same)",
    re.I,
)
_MARKS, _BRACKETS = ("#", "//", "/*", "<!--", "--", ";", "%", "{/*"), str.maketrans("[](){}<>", " " * 8)


def _core_words(body):
    """A comment's words without ellipses, brackets and the punctuation around them."""
    return " ".join(_ELL.sub(" ", body).translate(_BRACKETS).strip(" \t.…:,;!*~=_|-").split())


def _tier(line):
    """0: no placeholder; 1: an explicit phrase with an ellipsis; 2: a weaker sign, judged with the line above."""
    m = len(line) <= 200 and _PLACEHOLDER_WORDS.search(line.lower()) and _LINE.fullmatch(line)
    if not m:
        return 0
    mark, body, ell = m.group(1), m.group(2) if m.group(1) else m.group(3), _ELL.search(line)
    core = _core_words(body)
    if mark and mark != "*" and _CALLS_KEPT.fullmatch(body.strip(" \t()[].")):
        return 2
    # A bare line: "...existing code..." is one; "... x = 1" (a doctest) and "...props," are code.
    if not mark:
        return 1 if ell and " " in core and _CORE.fullmatch(core) else 0
    if core and _CORE.fullmatch(core):
        return 1 if ell else 2 if mark != "*" else 0  # (a ` * ` line of a doc comment is prose)
    if not ell or body.startswith("  "):  # "#     ..." is an example inside a comment
        return 0
    if not core:  # "// ...", "/* ... */", "{/* ... */}", "# [...]"; not "# . . . . . . ." nor "# ...=..."
        return 2 if mark in _MARKS and _ELL.fullmatch(body.strip(" []()")) else 0
    lead = body.lstrip(" [(").startswith(ell.group())
    if _LOOSE.fullmatch(("… " if lead else "") + core) or lead and _AFTER_ELLIPSIS.fullmatch(core):
        return 1 if mark == "*" else 2
    return 0


def placeholder_lines(content, docs=False, insert=False):
    """Yield (1-based number, text) of `content`'s placeholder lines (split at "\\n"). A weak one under a prose comment
    line opening with the same character belongs to it (an example, a sentence's end); with `docs` (Markdown, plain
    text, where examples use "// ..." and "--snip--" in earnest) no weak one counts; with `insert` (new lines, which
    delete nothing: a heading "// Existing tests" above them stands for nothing) a weak one counts only with an
    ellipsis ("// ...", "# ... same as above ...")."""
    number, last = 1, 0
    for m in _CAND.finditer(content) if _PLACEHOLDER_WORDS.search(content.lower()) else ():
        line, start = m.group(), m.start()
        comment = _comment_of(line)
        tier = _tier(comment)
        if tier == 2 and insert and not _ELL.search(comment):
            tier = 0
        if tier == 2 and (docs or start):
            above = content[content.rfind("\n", 0, start - 1) + 1 : start - 1] if start else ""
            prose = above.lstrip()[:1] == comment.lstrip()[:1] and _LINE.fullmatch(above)
            tier = 0 if docs or prose and prose.group(1) and not _tier(above) else 2
        if tier:
            number, last = number + content.count("\n", last, start), start
            yield number, line.rstrip("\r")


def find_placeholder(content, replaced, docs=False, insert=False):
    """`content`'s first placeholder line as (line number, text) that `replaced`, the text it replaces,
    does not hold too (ignoring indentation: a line already there is the file's own), or None.
    Outside documentation, two signs that need `replaced` count too (_stands_for_replaced)."""
    kept = {line.strip() for line in replaced.split("\n")} if replaced else set()
    for number, text in placeholder_lines(content, docs, insert):
        if text.strip() not in kept:
            return number, text
    if docs or not replaced or not _CAND.search(content):
        return None
    return _stands_for_replaced(content, replaced, kept)


# A comment that names what it keeps ("# g and h unchanged", "// keep total, clear", "# ... g ..."):
# a placeholder when one of those names stands in the replaced text and nowhere else in the content.
_NAME = r"[A-Za-z_$][\w$]*"
_KEPT_NAMES = _LazyPattern(
    r"(?:((?:keep(?:ing)?|unchanged\s*:?|existing)(?:\s+(?:functions?|methods?|classes?|helpers?|fields?))?)"
    r"|(?:the\s+)?(?:other|old|original)(?:\s+(?:functions?|methods?|classes?|helpers?|fields?))?"
    r"|functions?|methods?|classes?|helpers?)?\s*"
    rf"({_NAME}(?:\s*(?:,|/|&|\band\b|\bor\b)\s*{_NAME})*)\s*:?"
    r"(\s+(?:(?:is|are|remains?|stays?|kept)\s+)?(?:unchanged|untouched|intact|identical|as[ -]is|as\s+before"
    r"|(?:the\s+)?same(?:\s+as\s+before)?))?",
    re.I,
)
# A vaguer phrase ("// other methods", "# etc.", "<!-- other items -->"): a placeholder where it stands
# in place of lines of the replaced text that the content drops (_in_place_of_dropped).
_TRAILING_SOFT = _LazyPattern(
    rf"(?:and\s+)?(?:the\s+)?(?:other|remaining|more|previous|original|old|rest\s+of(?:\s+the)?)\s+"
    rf"(?:{_W}\s+){{0,2}}{_W}(?:\s+(?:here|below|go\s+here|follow))?|(?:and\s+)?(?:the\s+)?others"
    r"|everything\s+else|etc\.?|and\s+so\s+on|(?:continue\s+)?as\s+before"
    r"|lines\s+\d+\s*-\s*\d+\s+as\s+before|omitted|same|truncated",
    re.I,
)
_RULER = _LazyPattern(r"[-=*#~_]{4,}")
_CLOSER_LINE = _LazyPattern(r"\s*(?:[)\]}>]+[)\]}>;,]*|</[\w:.-]+>|end|fi|done|esac|endif|\*/|-->)?\s*")


def _stands_for_replaced(content, replaced, kept):
    """(line number, text) of a comment line of `content` that stands for code of `replaced` by the
    signs only the replaced text shows (_KEPT_NAMES, _TRAILING_SOFT), or None. At most
    _CONTEXT_CHECKS comments that show such a sign are looked into (each costs a pass)."""
    view, number, last = _Dropping(content, replaced), 1, 0
    for m in _CAND.finditer(content):
        line = m.group().rstrip("\r")
        signs = _signs(line, kept)
        if signs[0] or signs[2]:  # (counted on from the last one: a content of many comments is one pass)
            number, last = number + content.count("\n", last, m.start()), m.start()
            if _stands_for(signs, view, number, (m.start(), m.end())):
                return number, line
            if view.budget <= 0:
                break
    return None


_CONTEXT_CHECKS = 100


def _signs(line, kept):
    """(the names a comment line says are kept, whether every one of them must go for it to stand
    for them, whether it is a vaguer phrase: _TRAILING_SOFT) of a line of content that `kept` (the
    replaced text's lines) does not hold; (set(), False, None) for others. A bare list of names
    (`// add, remove, clear`: _NAME_LIST) says no more than that it names them: all must go."""
    if len(line) > 200 or line.strip() in kept:
        return set(), False, None
    parts = _LINE.fullmatch(_comment_of(line)) if _SIGN_WORDS.search(line.lower()) else None
    if not parts or not parts.group(1) or parts.group(1) == "*":
        return _unmarked_signs(line, parts)
    core = _core_words(parts.group(2))
    ruled = _RULER.search(parts.group(2))  # (a section's heading: `# -- Other options -------`)
    return _kept_names(core, parts.group(2)), False, not ruled and _TRAILING_SOFT.fullmatch(core)


def _unmarked_signs(line, parts):
    """_signs of a line no comment mark of which shows a sign: a lone indented ellipsis (vaguer
    still), or a comment that is a bare list of two names or more (`// add, remove, clear`)."""
    if parts and not parts.group(1) and _ELL.fullmatch(line.strip()) and line[:1] in " \t":
        return set(), False, True  # (indented: at the start of a line it ends a YAML document)
    listed = _NAME_LIST.fullmatch(line)
    names = listed and set(re.findall(_NAME, listed.group(1))) - _NOT_NAMES
    return (names, True, None) if names and len(names) > 1 else (set(), False, None)


_NAME_LIST = _LazyPattern(
    rf"\s*(?://+|#+|--|;+|%+)\s*({_NAME}(?:\s*(?:,|&|/|\band\b)\s*{_NAME})+)\s*[.;]?\s*"
)


# (a word one of the two signs needs, or an ellipsis: the comments without one are passed at once)
_SIGN_WORDS = _LazyPattern(  # (of a line in lower case: faster than IGNORECASE)
    r"keep|unchanged|untouched|intact|identical|existing|same|as[ -]is|before|other|remaining|more|rest"
    r"|etc|so on|omitted|truncated|previous|original|old|else|\.\.\.|…"
)


class _Dropping:
    """A content and the text it replaces, with what the context signs look up, worked out once
    when first needed: the replaced text's lines of code (_code_lines) and the content's (`code`:
    (number, stripped line)); for each of those, the nearest line at or after it, and at or before
    it, that stands once in both texts (an anchor: (place in the replaced text, index in `code`));
    and running counts of the replaced lines the content dropped and of its new lines."""

    def __init__(self, content, replaced):
        self.content, self.replaced = content, replaced
        self.budget, self._made = _CONTEXT_CHECKS, False

    @functools.cached_property
    def lines(self):  # (split only once a comment shows a sign: most contents show none)
        return self.content.split("\n")

    def make(self):
        if self._made:
            return self
        self._made = True
        old = self.old = [x for _n, x in _code_lines(self.replaced.split("\n"))]
        code = self.code = _code_lines(self.lines)
        self.olds, there = set(old), {line.strip() for line in self.lines}
        self.after, self.before = _anchors(old, code)
        self.new = list(itertools.accumulate((x not in self.olds for _n, x in code), initial=0))
        self.gone = list(itertools.accumulate((x not in there for x in old), initial=0))
        return self


def _anchors(old, code):
    """For each index k of `code` (content lines of code: (number, stripped line)), the nearest
    anchor at or after it, and the nearest before it (at k + 1): (its place in `old`, its index in
    `code`), or (len(old), len(code)) and (-1, -1) for none. An anchor stands once in each."""
    twice = collections.Counter(old)
    twice.subtract(x for _n, x in code)
    mine = collections.Counter(x for _n, x in code)
    anchors = {x: k for k, x in enumerate(old) if twice[x] == 0 and mine[x] == 1}
    after, before = [(len(old), len(code))] * (len(code) + 1), [(-1, -1)] * (len(code) + 1)
    for k in range(len(code) - 1, -1, -1):
        after[k] = (anchors[code[k][1]], k) if code[k][1] in anchors else after[k + 1]
    for k, (_n, x) in enumerate(code):
        before[k + 1] = (anchors[x], k) if x in anchors else before[k]
    return after, before


def _stands_for(signs, view, number, span):
    """Whether the comment of content line `number` (at `span` of the content) with `signs`
    (_signs: names it keeps, whether all must go, whether it is a vaguer phrase) stands for one of
    those names (_name_goes), or, a vaguer phrase, stands where lines went (_in_place_of_dropped).
    A bare list of names must do both, for all of them: above new code it is a heading (`# parse
    and validate` over the function that merges them: found by the regression pass)."""
    names, every, soft = signs
    if every:
        view.budget -= 1
        return _in_place_of_dropped(view.make(), number) and all(_name_goes(n, view, span) for n in names)
    if names and any(_name_goes(name, view, span) for name in names):
        return True
    if not soft or _under_prose(view.lines, number) or _begins_a_block(view.lines, number):
        return False
    view.budget -= 1
    return _in_place_of_dropped(view.make(), number)


def _begins_a_block(lines, number):
    """Whether content line `number`, a stub (`...`, `pass  # note`), is the only statement of a
    block: it ends its block (_ends_its_block), and stands first in the content, or under a line
    indented less (its header), a header's last line (`:`, `{`) or a docstring, comment lines
    passed over. A stub's body, not a stand-in for the code around it (found by the regression
    pass: a Protocol's or an abstract method's `...` in place of a body was refused)."""
    line = lines[number - 1]
    if not _STUB.match(line) and not _ELL.fullmatch(line.strip()) or not _ends_its_block(lines, number, True):
        return False  # (a body is its block's only statement: `...` above sibling methods stands for some)
    above = next(
        (x for x in reversed(lines[: number - 1]) if x.strip() and not x.lstrip().startswith(_MARKS)), None
    )
    if above is None or above.strip()[:1] in "\"'" or above.rstrip().endswith(('"""', "'''", ":", "{")):
        return True  # (none, a docstring, or a header's last line: `def f(a,\n        b):`)
    return len(above) - len(above.lstrip()) < len(line) - len(line.lstrip())


def _kept_names(core, body):
    """The names a comment says are kept (_KEPT_NAMES: with a keep word, a state such as
    `unchanged`, or after a leading ellipsis), but words that are no names (`it`, `the`)."""
    lead = body.lstrip(" [(").startswith(("...", "…"))
    m = (lead or _KEEP_WORDS.search(core.lower())) and _KEPT_NAMES.fullmatch(core)
    if not m or not (m.group(1) or m.group(3) or lead):
        return set()
    return {name for name in re.findall(_NAME, m.group(2)) if name.lower() not in _NOT_NAMES}


def _under_prose(lines, number):
    """Whether content line `number` (a comment) goes on an ordinary comment line right above it,
    opening with the same character: a sentence's end ("# ... more easily written as:")."""
    above, line = (lines[number - 2] if number > 1 else ""), lines[number - 1]
    prose = above.lstrip()[:1] == line.lstrip()[:1] and _LINE.fullmatch(above)
    return bool(prose and prose.group(1) and not _tier(above))


def _name_goes(name, view, span):
    """Whether `name`, named as kept by the comment at `span` of the content, is defined in the
    replaced text (`def g`, `g = 1`, `g() {`) and nowhere else in the content, or only called
    there (`g(`) and standing nowhere else in the content."""
    if name not in view.replaced:  # (most names a note mentions: no pass of a regex for them)
        return False
    view.budget -= 1
    word = rf"(?<![\w$]){re.escape(name)}(?![\w$])"
    own = rf"(?<![\w$.]){re.escape(name)}\s*"
    defined = rf"\b{_DEFINING}\s+{word}|{own}(?:=(?!=)|:(?!:)|\([^()\n]*\)\s*(?:\{{|:|->|=>))"
    if re.search(defined, view.replaced):
        return not _outside(defined, view.content, span)
    return bool(re.search(own + r"\(", view.replaced)) and not _outside(word, view.content, span)


def _outside(pattern, text, span):
    """Whether `pattern` matches `text` somewhere that is not inside `span`."""
    return any(not span[0] <= m.start() < span[1] for m in re.finditer(pattern, text))


_KEEP_WORDS = _LazyPattern(r"keep|unchanged|untouched|intact|identical|existing|same|as[ -]is|as before")
_DEFINING = r"(?:def|class|function|fn|func|sub|let|const|var|type|struct|interface|enum|trait|module)"
_NOT_NAMES = frozenset(
    "and or it its this that these those them they the a an all rest everything same as is are".split()
)


def _in_place_of_dropped(view, number):
    """Whether content line `number` stands where lines of the replaced text went: no new line comes
    between it and the next line kept from it (unless it ends its block: _ends_its_block), and
    between the anchors around it (lines that stand once in both texts, in the same order) at least
    two lines more of the replaced text went than new ones came besides it (a heading above new
    code or below a line that was changed, a comment reworded, stands in for nothing). Blank lines
    and closers (`}`, `</ul>`) do not count."""
    import bisect

    code, mine = view.code, bisect.bisect_left(view.code, (number, ""))
    after = code[mine + 1][1] if mine + 1 < len(code) else None
    if after is not None and after not in view.olds and not _ends_its_block(view.lines, number):
        return False
    (below, last), (above, first) = view.after[mine + 1], view.before[mine]
    if above >= below:  # (moved lines: the anchors cross; the whole texts are compared)
        (above, first), (below, last) = (-1, -1), (len(view.old), len(code))
    new = view.new[last] - view.new[first + 1] - (code[mine][1] not in view.olds)
    return view.gone[below] - view.gone[above + 1] > new + 1


def _code_lines(lines):
    """(number from 1, line stripped) of `lines`, but those of nothing but blank space and closers
    (`}`, `</ul>`, `end`)."""
    closer = _CLOSER_LINE.fullmatch
    return [(n, x.strip()) for n, x in enumerate(lines, 1) if x.strip() and not closer(x)]


def _ends_its_block(lines, number, comments=False):
    """Whether content line `number` is followed by nothing but blank lines and closers (`}`,
    `</ul>`, `end`), and with `comments` comment lines, up to the end of the content or to a line
    indented less than it."""
    indent = len(lines[number - 1]) - len(lines[number - 1].lstrip())
    for line in lines[number:]:
        if not line.strip() or _CLOSER_LINE.fullmatch(line) or comments and line.lstrip().startswith(_MARKS):
            continue
        return len(line) - len(line.lstrip()) < indent
    return True


_CUT_SEEN = 1000  # characters a content line repeats of a long line's start to count as built from it
_CUT_END = 200  # and characters of that line's end it must hold too (a cut read never shows them)


def find_cut_line(content, replaced):
    """(content line number, the replaced line's length) of the first `content` line built from a
    line of `replaced` long enough for a server read to show it cut (READ_MAX_CHARS) but that
    lacks that line's end: it starts like it, or holds the text shown a little before the cut
    (its first characters were edited). Text built from the cut view would delete the part never
    shown. A line that holds the end but is not long enough to have kept most of the part never
    shown is built from the view too: in a line that repeats itself (a sparse CSV row, padding),
    the end stands anywhere.
    None when there is none (a whole-line replace by other text, or one that keeps the end)."""
    longs = list(_long_lines(replaced, READ_MAX_CHARS))
    if not longs:
        return None
    for line in _long_lines(content, _CUT_SEEN):
        for long in longs:
            if long[-_CUT_END:] in line and _end_kept(line, long):
                continue
            shown = long[READ_MAX_CHARS - _CUT_SEEN - _CUT_END : READ_MAX_CHARS - _CUT_SEEN]
            if line.startswith(long[:_CUT_SEEN]) or shown in line:
                at = content.find(line)
                return content.count("\n", 0, at) + 1, len(long)
    return None


def _end_kept(line, long):
    """Whether `line`, which holds the last _CUT_END characters of the long line `long`, kept its
    end: they stand in `long` only at its end (one that saw them sent them), or `line` is long
    enough to hold more than half of what a cut read never showed (in a line that repeats itself,
    a sparse CSV row, they stand anywhere)."""
    end = long[-_CUT_END:]
    return (
        long.find(end) == len(long) - len(end)
        or len(line) > READ_MAX_CHARS + (len(long) - READ_MAX_CHARS) // 2
    )


def _long_lines(text, longer):
    """The lines of `text` of more than `longer` characters, found by looking into one window of
    half that length at a time (each such line covers one with no newline)."""
    step, pos = longer // 2, 0
    while pos < len(text):
        if text.find("\n", pos, pos + step) >= 0 or len(text) - pos < step:
            pos += step
            continue
        first = text.rfind("\n", 0, pos) + 1
        last = text.find("\n", pos)
        last = len(text) if last < 0 else last
        if last - first > longer:
            yield text[first:last]
        pos = last + 1


# ====================================================================================================
# 6. Scanners (docs/cli.md#balance-func-range-tag-range)
# ====================================================================================================
# How it works: one compiled regular expression per language family (and bracket set) tokenizes
# the text. Every branch of the alternation starts with a literal character, so the `re` engine skips
# ordinary code in C and the Python loop runs once per bracket, string or comment - never once per
# character. Each branch ends with an empty group; `m.lastindex` names the branch and the spec's
# `roles` say what it is: a bracket that opens or closes, a token to skip (closed strings, comments),
# a template literal counted whole, or a token that needs a small Python handler (unterminated
# strings, template literals, regex literals, nested comments, ...). Every scanner - brackets, the
# quick walk, Python's logical lines, markup - reads its tokens through one loop, _Tokens (6.3).

# --- 6.1 Languages --------------------------------------------------------------------------------


class Language:
    """One language the scanners know: how files are recognised, which tokenizer family reads it,
    how its function ranges are found ("brace", "indent", "markup", or None) and how a line
    comment starts. Every table below is derived from LANGUAGE_TABLE."""

    __slots__ = ("id", "extensions", "filenames", "interpreters", "fences", "family", "ranges", "comment")

    def __init__(
        self, id, extensions, family, ranges, comment="//", filenames="", interpreters="", fences=""
    ):
        # (`comment`: how a line comment starts, or "START END" of a comment that must end on
        # its line, as CSS's /* */ and markup's <!-- -->; "" for none, as JSON has)
        self.id, self.family, self.ranges, self.comment = id, family, ranges, comment
        self.extensions, self.filenames = extensions.split(), filenames.split()
        self.interpreters, self.fences = interpreters.split(), fences.split()


# To add a language: one row here (and, for a new tokenizer, a family function in 5.2); see
# CONTRIBUTING.md. Families: the tokenizer (5.2); ranges: how func-range finds a body (5.7, 5.8).
LANGUAGE_TABLE = (
    Language("c", "c h", "c", "brace", fences="objective-c"),
    Language("cpp", "cpp cc cxx c++ hpp hh hxx h++ ipp tpp inl ino cu", "c", "brace"),
    Language("java", "java", "c", "brace"),
    Language("csharp", "cs csx", "c", "brace", fences="csharp c#"),
    Language("kotlin", "kt kts", "c", "brace", fences="kotlin"),
    Language("swift", "swift", "c", "brace"),
    Language("dart", "dart", "c", "brace"),
    Language("javascript", "js mjs cjs jsx", "js", "brace", interpreters="node nodejs bun", fences="javascript"),
    Language("typescript", "ts mts cts tsx", "js", "brace", interpreters="deno ts-node tsx", fences="typescript"),
    Language("go", "go", "go", "brace", fences="golang"),
    Language("rust", "rs", "rust", "brace", fences="rust"),
    Language("python", "py pyi pyw", "python", "indent", "#", fences="python python3"),  # (python* shebangs too)
    Language(
        "shell",
        "sh bash zsh ksh dash ash bats",
        "shell",
        "brace",
        "#",
        filenames=".bashrc .bash_profile .bash_aliases .zshrc .zprofile .profile .kshrc",
        interpreters="sh bash zsh ksh dash ash",
        fences="bash shell sh zsh",
    ),
    Language("yaml", "yaml yml", "yaml", None, "#", filenames=".clang-format", fences="yaml"),
    Language("toml", "toml", "toml", None, "#", filenames="pipfile cargo.lock poetry.lock"),
    Language(
        "ruby",
        "rb rake gemspec ru",
        "ruby",
        "indent",
        "#",
        filenames="gemfile rakefile podfile vagrantfile",
        interpreters="ruby",
        fences="ruby",
    ),
    Language("perl", "pl pm psgi", "perl", "brace", "#", interpreters="perl", fences="perl"),
    Language("sql", "sql psql", "sql", None, "--"),
    Language("lua", "lua", "lua", "indent", "--", interpreters="lua luajit"),
    Language("haskell", "hs", "haskell", None, "--", interpreters="runhaskell runghc", fences="haskell"),
    Language("css", "css", "css", "brace", "/* */"),
    Language("scss", "scss less", "css", "brace"),
    Language("json", "json jsonc json5 geojson webmanifest", "json", None, "", fences="json jsonc"),
    Language("html", "html htm xhtml shtml", None, "markup", "<!-- -->", fences="html"),
    Language(
        "xml",
        "xml xsd xsl xslt svg plist csproj vbproj fsproj props targets resx xaml wsdl rss atom fxml kml gpx nuspec",
        None,
        "markup",
        "<!-- -->",
        fences="xml",
    ),
    Language("vue", "vue", None, "markup", "<!-- -->", fences="vue"),
    Language("svelte", "svelte", None, "markup", "<!-- -->", fences="svelte"),
    Language("markdown", "md markdown mkd mdown mdx", None, None, "<!-- -->", fences="markdown"),
)  # fmt: skip

LANGUAGES = tuple(lang.id for lang in LANGUAGE_TABLE)
_EXTENSION_LANGUAGES = {ext: lang.id for lang in LANGUAGE_TABLE for ext in lang.extensions}
_FILENAME_LANGUAGES = {name: lang.id for lang in LANGUAGE_TABLE for name in lang.filenames}
_INTERPRETER_LANGUAGES = {name: lang.id for lang in LANGUAGE_TABLE for name in lang.interpreters}
_FENCE_LANGUAGES = {word: lang.id for lang in LANGUAGE_TABLE for word in lang.fences}
_RANGE_KINDS = {lang.id: lang.ranges for lang in LANGUAGE_TABLE}
_COMMENT_PREFIX = {lang.id: lang.comment for lang in LANGUAGE_TABLE}
_MARKUP_LANGUAGES = tuple(lang.id for lang in LANGUAGE_TABLE if lang.ranges == "markup")

_SHEBANG = _LazyPattern(r"#![ \t]*(\S+)([^\n]*)")
_INTERPRETER_VERSION = _LazyPattern(r"[\d.]+$")


def detect_language(path, head=""):
    """Language id for a file name (extension, well-known name) or, failing that, its shebang.

    >>> detect_language("src/App.tsx", "")
    'typescript'
    >>> detect_language("deploy", "#!/usr/bin/env bash\\n")
    'shell'
    """
    name = re.split(r"[\\/]", str(path or ""))[-1].lower()
    if name in _FILENAME_LANGUAGES:
        return _FILENAME_LANGUAGES[name]
    if "." in name.strip("."):
        language = _EXTENSION_LANGUAGES.get(name.rsplit(".", 1)[1])
        if language:
            return language
    return _shebang_language(str(head or ""))


def _shebang_language(head):
    """Language named by a `#!` line (`#!/usr/bin/env -S node --x`, `#!/bin/bash -e`), or None."""
    m = _SHEBANG.match(head)
    if m is None:
        return None
    program = m.group(1).rsplit("/", 1)[-1]
    if program == "env":
        words = [w for w in m.group(2).split() if not w.startswith("-") and "=" not in w]
        program = words[0].rsplit("/", 1)[-1] if words else ""
    if program.startswith("python"):
        return "python"
    return _INTERPRETER_LANGUAGES.get(_INTERPRETER_VERSION.sub("", program) or program)


def _fence_language(info):
    """Language of a Markdown fence from its info string (` ```ts title=x `), or None."""
    word = info.strip().split(None, 1)[0].lower().strip("{}.") if info.strip() else ""
    return _FENCE_LANGUAGES.get(word) or _EXTENSION_LANGUAGES.get(word)


# --- 6.2 Token patterns, one family per function --------------------------------------------------
# A family returns (allowed brackets, bracket pattern overrides, skips, specials).
# skips:    (kind, pattern)                  kind is "string" or "comment"
# specials: (kind, pattern, handler, arg)    handler(state, match, arg) -> resume offset or None
# Every pattern MUST begin with a literal character (the `re` engine then scans for the set of
# first characters in C) and MUST NOT contain a top-level `|`.

_DQ_BODY = r'[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*'
_SQ_BODY = r"[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*"
_DQ = '"' + _DQ_BODY + '"'
_SQ = "'" + _SQ_BODY + "'"
_DQ_MULTI = r'"[^"\\]*(?:\\[\s\S][^"\\]*)*"'
_SQ_MULTI = r"'[^'\\]*(?:\\[\s\S][^'\\]*)*'"
_LINE_COMMENT = r"//[^\n]*"
_BLOCK_COMMENT = r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"
_BLOCK_COMMENT_OPEN = r"/\*[\s\S]*"
_NESTED_COMMENT_TOKENS = _LazyPattern(r"/\*|\*/")  # (Rust, Kotlin, Swift, Dart: _h_nested_comment)
_TRIPLE_DQ = r'"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'
_TRIPLE_SQ = r"'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"
_TO_EOF = r"[\s\S]*"
_TO_EOL = r"[^\n]*"


def _h_unclosed(state, m, symbol):
    """An unterminated string/comment: report it where it starts; the pattern already ate it."""
    state.problems.append((m.start(), symbol, "unclosed"))
    state.uncertain = True
    return None


_KOTLIN_RAW = r'"""[\s\S]*?"""(?!")'
_TEMPLATE_OPENERS = {"kotlin": "${", "swift": "\\("}  # (interpolations that may hold strings)
_DQ_BODY_WITHOUT = {  # (a string with none of them: one token, as any other)
    "kotlin": r'(?:[^"\\\n$]|\\.|\$(?!\{))*',
    "swift": r'(?:[^"\\\n]|\\[^(\n])*',
}


def _c_family(language):
    triple = language in ("java", "csharp", "kotlin", "swift", "dart")
    dq_start = '"(?!"")' if triple else '"'
    skips = [("comment", _LINE_COMMENT)]
    if language in ("kotlin", "swift", "dart"):  # (block comments nest there, as in Rust)
        specials = [("comment", r"/\*", _h_nested_comment, (_NESTED_COMMENT_TOKENS, "/*"))]
    else:
        skips.append(("comment", _BLOCK_COMMENT))
        specials = [("comment", _BLOCK_COMMENT_OPEN, _h_unclosed, "/*")]
    if triple:  # (Kotlin's are raw, and end at the last quote of a run: `"""say "hi""""`)
        skips.append(("string", _KOTLIN_RAW if language == "kotlin" else _TRIPLE_DQ))
        specials.append(("string", '"""' + _TO_EOF, _h_unclosed, '"""'))
    if language == "dart":
        skips.append(("string", _TRIPLE_SQ))
        specials.append(("string", "'''" + _TO_EOF, _h_unclosed, "'''"))
    if language == "csharp":
        verbatim = r'"[^"]*(?:""[^"]*)*"'
        skips += [("string", "@" + verbatim), ("string", r"\$@" + verbatim), ("string", r"@\$" + verbatim)]
        specials.append(("string", '@"' + _TO_EOF, _h_unclosed, '@"'))
    if language in ("c", "cpp"):  # (a .h file may be C++: a C macro named R before "( is no C anyone writes)
        opener = r'"[^()\\\s"]{0,16}\('
        specials += [
            ("string", r"R(?<![\w]R)" + opener, _h_cpp_raw_string, None),
            ("string", r"R(?<=[^\w][uUL]R)" + opener, _h_cpp_raw_string, None),
            ("string", r"R(?<=[^\w]u8R)" + opener, _h_cpp_raw_string, None),
        ]
    _c_strings(language, dq_start, skips, specials)
    if language in ("c", "cpp"):
        specials.append(("string", "'", _h_c_quote_after_word, None))
    if language in ("c", "cpp", "csharp"):
        specials.append(("comment", r"#[ \t]*(?:else|elif)\b", _h_other_arms, None))
    return "()[]{}", {}, skips, specials


def _c_strings(language, dq_start, skips, specials):
    """Into `skips` and `specials`: the one-line strings and characters of a C-like language,
    Kotlin's and Swift's reading the code of their interpolations (_h_template_dq)."""
    char_start = "'(?<![\\w]')" if language in ("c", "cpp") else "'"
    opener = _TEMPLATE_OPENERS.get(language)
    dq_body = _DQ_BODY if opener is None else _DQ_BODY_WITHOUT[language]
    skips += [("string", dq_start + dq_body + '"'), ("string", char_start + _SQ_BODY + "'")]
    specials += [
        ("string", dq_start, _h_template_dq, opener)
        if opener
        else ("string", dq_start + _DQ_BODY, _h_unclosed, '"'),
        ("string", char_start + _SQ_BODY, _h_unclosed, "'"),
    ]
    if opener:  # (identifiers in backticks: `returns user's name`)
        skips.append(("code", r"`[^`\n]*`"))
    if language == "swift":  # (raw strings: `\(` there is text, `#"a\(b"#`; regex literals `#/…/#`)
        skips[:0] = [
            ("string", r'#"""[\s\S]*?"""#'),
            ("string", r'#"(?:[^"\n]|"(?!#))*"#'),
            ("string", r"#/(?:[^/\n]|/(?!#))*/#"),
        ]


_CONDITIONAL = _LazyPattern(
    r"#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b[^\n]*"
)  # (first on its line: _directives)
_C_NOISE = _LazyPattern(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*[\s\S]*?\*/')
_ARMS_REACH = (
    1 << 14
)  # characters a conditional's other arms (and its first, back from `#else`) are looked for in


def _h_other_arms(state, m, arg):
    """`#else` or `#elif` of a conditional whose every arm opens (or closes) the same braces: the
    arms after the first are skipped to the `#endif`, as the compiler reads one configuration
    (`#ifdef X` / `int f(int a) {` / `#else` / `int f(void) {` / `#endif` / body / `}`): else the
    function seemed to end at a later function's `}`, and a replace by target removed that one
    too. Arms that open nothing, differ, or reach too far are read as they stand (None)."""
    text, at = state.text, m.start()
    if not _starts_its_line(text, state.start, at):
        return None  # (no directive)
    arms = _later_arms(text, at, min(state.end, at + _ARMS_REACH))
    deltas = {_brace_delta(text[a:b]) for a, b in zip([at, *arms], arms)} if arms else {0}
    if len(deltas) != 1 or deltas == {0}:  # (most other arms open nothing: the first is not looked for)
        return None
    before = _first_arm_start(text, max(state.start, at - _ARMS_REACH), at)  # (the arm just read)
    return arms[-1] if before is not None and _brace_delta(text[before:at]) in deltas else None


def _starts_its_line(text, lo, at):
    """Whether only spaces and tabs stand between the start of the line (or `lo`) and `at`."""
    k = at
    while k > lo and text[k - 1] in " \t":
        k -= 1
    return k == lo or text[k - 1] == "\n"


def _directives(text, lo, hi):
    """The conditional directives (`#if`...`#endif`) of text[lo:hi] that start their lines."""
    for m in _CONDITIONAL.finditer(text, lo, hi):
        if _starts_its_line(text, lo, m.start()):
            yield m


def _first_arm_start(text, lo, at):
    """Where the arm before the `#else`/`#elif` at `at` starts (the end of the `#if` or `#elif`
    line of its conditional just above), or None when that is not within text[lo:at]."""
    depth = 0
    for m in reversed(list(_directives(text, lo, at))):
        word = m.group(1)
        if word == "endif":
            depth += 1
        elif depth == 0 and (word.startswith("if") or word == "elif"):
            return m.end()
        elif word.startswith("if"):
            depth -= 1
    return None


def _later_arms(text, at, hi):
    """The ends of the arms from `at` (an `#else`/`#elif` line) on: each next `#elif`/`#else` of
    the same conditional, then the end of its `#endif` line; None when that is not in text[:hi]."""
    depth, ends = 0, []
    for m in _directives(text, at, hi):
        word = m.group(1)
        if word.startswith("if"):
            depth += 1
        elif word == "endif" and depth:
            depth -= 1
        elif word == "endif":
            return [*ends, m.end()]
        elif depth == 0 and m.start() > at:
            ends.append(m.start())
    return None


def _brace_delta(code):
    """`{` minus `}` in C code, its strings and comments aside."""
    code = _C_NOISE.sub("", code)
    return code.count("{") - code.count("}")


def _h_cpp_raw_string(state, m, arg):
    """C++ `R"delim( ... )delim"`: ends at the first `)delim"`; unterminated runs to the end."""
    closer = ")" + m.group()[2:-1] + '"'
    found = state.text.find(closer, m.end(), state.end)
    if found < 0:
        state.problems.append((m.start(), 'R"', "unclosed"))
        return state.end
    return found + len(closer)


_C_CHAR_PREFIX = _LazyPattern(r"(?<![\w])(?:u8|[uUL])$")
_C_CHAR = _LazyPattern("'" + _SQ_BODY + "'")


def _h_c_quote_after_word(state, m, arg):
    """`'` right after a word: a prefixed char literal (`L'x'`, `u8'x'`) or a digit separator."""
    start = m.start()
    if _C_CHAR_PREFIX.search(state.text, max(state.start, start - 3), start):
        char = _C_CHAR.match(state.text, start, state.end)
        if char:
            return char.end()
    return None


_TEMPLATE_BODY = r"[^`\\$]*(?:(?:\\[\s\S]|\$(?!\{))[^`\\$]*)*"


def _division(words):
    """A `/` that _slash_starts_regex would call division, decided inside the regex engine: right
    after an operand's last character, or after it and one space, unless a regex keyword ends there
    (then the handler decides, as for every other `/`)."""
    operand = "[\\w$\\]}\"'`<]"  # (not `)`: `if (s) /}/.test(s)` is a regex, the handler tells)
    keywords = "".join(f"(?<!{w}/)(?<!{w} /)" for w in sorted(words))
    return f"/(?:(?<={operand}/)|(?<={operand} /)){keywords}"


# a regex literal after its first `/`: the body (classes may hold `/`) and the flags
_JS_REGEX_BODY = r"(?![*/])(?:[^/\\\[\n]|\\[^\n]|\[(?:[^\]\\\n]|\\[^\n])*\])+/[A-Za-z]*"
# where the character before a `/` (or before it and one space) is one of these, _slash_starts_regex
# calls it a regex literal's start whatever came before (no keyword, no JSX, no operand)
_REGEX_AFTER = r"[(,=:\[!&|?{;+\-*%~^]"


def _regex_literal():
    """A JavaScript regex literal after one of _REGEX_AFTER, decided inside the regex engine (the
    handler decides every other `/`, and a literal that does not match here)."""
    return f"/(?:(?<={_REGEX_AFTER}/)|(?<={_REGEX_AFTER} /)){_JS_REGEX_BODY}"


_JS_LINE_COMMENT = r"/(?<![A-Za-z]:/)/[^\n]*"  # (`https://` in JSX text starts no comment)


def _js_family(language):
    sq_start = "'(?<![\\w$]')"  # `Don't` in JSX text is no string start
    skips = [
        ("comment", _JS_LINE_COMMENT),
        ("comment", _BLOCK_COMMENT),
        ("string", _DQ),
        ("string", sq_start + _SQ_BODY + "'"),
        ("string", "`" + _TEMPLATE_BODY + "`"),  # a template literal without `${`
        ("code", _division(_JS_REGEX_WORDS)),  # the common division: no handler call
        ("string", _regex_literal()),  # the common regex literal: no handler call
    ]
    specials = [
        ("comment", _BLOCK_COMMENT_OPEN, _h_unclosed, "/*"),
        ("string", '"' + _DQ_BODY, _h_unclosed, '"'),
        ("string", sq_start + _SQ_BODY, _h_unclosed, "'"),
        ("string", "'", _h_quote_after_word, _JS_QUOTE_WORDS),
        ("string", "`" + _TEMPLATE_BODY + "\\$\\{", _h_template_head, None),
        ("string", "`", _h_template, None),
        ("string", "/", _h_slash, _JS_REGEX_WORDS),
    ]
    return "()[]{}", {}, skips, specials


# A template literal whose substitutions hold only code without braces, slashes or backticks (nor
# any other bracket the scan counts), and whole strings: one token, for scans that need no `${`
# pair of their own (the quick check counts them; a blocks-only scan has no use for them). Others
# are scanned from `${` on. Where only braces count (blocks), `${f(a[i])}` is plain too.
def _plain_substitution(code):
    return r"\$\{" + code + "*(?:(?:" + _DQ + "|" + "'(?<![\\w$]')" + _SQ_BODY + "'" + ")" + code + r"*)*\}"


_PLAIN_TEMPLATES = {  # family function -> {only braces count: [(pattern, n)]}, n substitutions
    _js_family: {
        braces: [
            ("`" + _TEMPLATE_BODY + ("(?:" + _plain_substitution(code) + _TEMPLATE_BODY + ")") * n + "`", n)
            for n in (1, 2, 3)
        ]
        for braces, code in ((False, r"[^(){}\[\]/\"'`]"), (True, r"[^{}/\"'`]"))
    }
}


def _go_family(language):
    skips = [
        ("comment", _LINE_COMMENT),
        ("comment", _BLOCK_COMMENT),
        ("string", _DQ),
        ("string", "`[^`]*`"),
        ("string", _SQ),
    ]
    specials = [
        ("comment", _BLOCK_COMMENT_OPEN, _h_unclosed, "/*"),
        ("string", '"' + _DQ_BODY, _h_unclosed, '"'),
        ("string", "`" + _TO_EOF, _h_unclosed, "`"),
        ("string", "'" + _SQ_BODY, _h_unclosed, "'"),
    ]
    return "()[]{}", {}, skips, specials


def _rust_family(language):
    char = r"'(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]{1,8}\}|[^\n]))'"
    skips = [
        ("comment", _LINE_COMMENT),
        ("string", r'r(?<![\w]r)(?P<rs_hash>#*)"[\s\S]*?"(?P=rs_hash)'),
        ("string", r'b(?<![\w]b)r(?P<rs_hash2>#*)"[\s\S]*?"(?P=rs_hash2)'),
        ("string", _DQ_MULTI),
        ("string", char),
        ("string", "'"),  # a lone ' is a lifetime or label
    ]
    specials = [
        ("comment", r"/\*", _h_nested_comment, (_NESTED_COMMENT_TOKENS, "/*")),
        ("string", r'r(?<![\w]r)#+"' + _TO_EOF, _h_unclosed, 'r#"'),
        ("string", '"' + _TO_EOF, _h_unclosed, '"'),
    ]
    return "()[]{}", {}, skips, specials


def _f_prefixed(quote, negate=False):
    """Lookbehinds, to put right after an opening `quote`: it opens an f-string (`f"`, `rf"`,
    `Fr"`..., the prefix not the end of a longer word; Python 3.14's template strings `t"` are read
    alike), or with `negate` it does not."""
    prefixes = ("[fFtT]", "[rR][fFtT]", "[fFtT][rR]")  # (each after a non-word character: `assert"{"`)
    if negate:  # (most quotes follow no f, t or r: the first lookbehind lets them through at once)
        return rf"(?:(?<![fFtTrR]{quote})|" + "".join(rf"(?<![^\w]{p}{quote})" for p in prefixes) + ")"
    return "(?:" + "|".join(rf"(?<=[^\w]{p}{quote})" for p in prefixes) + ")"


def _f_simple(quote):
    """The rest of a one-line f-string after its opening `quote` whose replacement fields hold
    neither that quote, nor braces, nor a backslash, nor an f-string (strings in the other quote,
    whole): the common case, read inside the regex engine."""
    other = "'" if quote == '"' else '"'
    literal = rf"[^{quote}\\\n{{}}]|\\[^\n{{}}N]|\{{\{{|\}}\}}"
    nested = rf"(?<![fFtT]{other})(?<![fFtT][rR]{other})"  # (an f-string in a field goes to the handler)
    field = rf"\{{(?:[^\"'{{}}\\\n]|{other}{nested}[^{other}\\\n]*{other})*\}}"
    return f"(?:{literal}|{field})*{quote}"


def _python_family(language):
    skips = [
        ("comment", r"#[^\n]*"),
        ("string", _TRIPLE_DQ),
        ("string", _TRIPLE_SQ),
        ("string", '"' + _f_prefixed('"', negate=True) + '(?!"")' + _DQ_BODY + '"'),
        ("string", "'" + _f_prefixed("'", negate=True) + "(?!'')" + _SQ_BODY + "'"),
        ("string", '"' + _f_prefixed('"') + _f_simple('"')),
        ("string", "'" + _f_prefixed("'") + _f_simple("'")),
    ]
    specials = [
        ("string", '"""' + _TO_EOF, _h_unclosed, '"""'),
        ("string", "'''" + _TO_EOF, _h_unclosed, "'''"),
        ("string", '"' + _f_prefixed('"'), _h_fstring, '"'),
        ("string", "'" + _f_prefixed("'"), _h_fstring, "'"),
        ("string", '"' + _DQ_BODY, _h_unclosed, '"'),
        ("string", "'" + _SQ_BODY, _h_unclosed, "'"),
    ]
    return "()[]{}", {}, skips, specials


_NESTED_READ_LIMIT = 1 << 16  # how far a handler reads one f-string or shell string before it gives up
_PY_STRINGS = {'"': _LazyPattern(_DQ), "'": _LazyPattern(_SQ)}  # one-line strings, whole
_DQ_MULTI_STRING = _LazyPattern(_DQ_MULTI)


def _read_as_plain(state, m, plain):
    """Where the string whose quote `m` starts ends when read as the plain string `plain` (a
    pattern from the quote on), as the scanners read it before a handler looked inside; not there
    at all: reported `unclosed` there, and the scan goes on at the end of its line."""
    found = plain.match(state.text, m.start(), state.end)
    return found.end() if found else _unclosed_to_line_end(state, m)


def _unclosed_to_line_end(state, m):
    """The string whose quote `m` starts reported `unclosed`; the scan goes on at the end of its
    line (and is uncertain from there: an edit below may close it)."""
    state.problems.append((m.start(), state.text[m.start()], "unclosed"))
    state.uncertain = True
    newline = state.text.find("\n", m.end(), state.end)
    return state.end if newline < 0 else newline


def _h_fstring(state, m, quote):
    """An f-string whose replacement fields hold that quote, braces, a backslash or a line break
    (Python 3.12 lets `f"{d["k"]}"` nest the same quote): read by _fstring_end. What it cannot
    read (its text unterminated on its line, or longer than _NESTED_READ_LIMIT) is read as a plain
    string, as before 3.12."""
    raw = "r" in state.text[m.start() - 2 : m.start()].lower()
    end = _fstring_end(state.text, m.end(), min(state.end, m.end() + _NESTED_READ_LIMIT), quote, raw)
    if end is not None:
        return end
    plain = _PY_STRINGS[quote].match(state.text, m.start(), state.end)
    field = _open_field(state.text, m.end(), plain.end() - 1) if plain else None
    if field is not None:  # (`f"{x"`: no Python reads that)
        state.problems.append((field, "{", "unclosed"))
    return _read_as_plain(state, m, _PY_STRINGS[quote])


def _open_field(text, i, stop):
    """The offset of a replacement field that the f-string text text[i:stop] opens and never
    closes (`f"{x"`), or None; `{{` is a brace of the text."""
    while True:
        field = text.find("{", i, stop)
        if field < 0:
            return None
        if text.startswith("{{", field):
            i = field + 2
            continue
        i = _field_close(text, field + 1, stop)
        if i is None:
            return field


def _field_close(text, i, stop):
    """Past the `}` that closes the replacement field whose code starts at `i`, or None before
    `stop`; a quote inside it holds braces of its own (`f"{d['}']}"`), and `{...}` nest."""
    depth = 1
    while i is not None and i < stop:
        c = text[i]
        if c in "'\"":
            i = _quoted_end(text, i, stop)
            continue
        depth += (c == "{") - (c == "}")
        if not depth:
            return i + 1
        i += 1
    return None


def _quoted_end(text, i, stop):
    """Past the string (triple-quoted too) whose quote is at text[i], or None when it does not end
    before `stop`."""
    quote = text[i] * 3 if text.startswith(text[i] * 3, i) else text[i]
    close = text.find(quote, i + len(quote), stop)
    return None if close < 0 else close + len(quote)


_F_TEXT = _LazyPattern(r"[^\"'{}\\\n]*")  # f-string text with no meaning to _fstring_end
# field code with no meaning to _field_end; it may go on over lines, but not over a line that starts
# with code at column 0, other than a closer (a field left open while code is being written stops there)
_F_CODE = _LazyPattern(r"[^()\[\]{}:\"'#\n]*(?:\n(?=[ \t\n)\]}])[^()\[\]{}:\"'#\n]*)*")


def _fstring_end(text, i, end, quote, raw):
    """Where the f-string whose literal text starts at `i` ends (past its closing `quote`), or None
    when it does not end on this line. `{{` and `}}` are braces of the text; `{` opens a field."""
    while i < end:
        i = _F_TEXT.match(text, i, end).end()
        c = text[i : min(i + 1, end)]
        if c == quote:
            return i + 1
        if c in ("\n", ""):
            return None
        if c == "{" and text[i + 1 : i + 2] != "{":
            i = _field_end(text, i + 1, end, quote, raw)
            if i is None:
                return None
        else:
            i = _f_escape_end(text, i, raw) if c == "\\" else i + (2 if text.startswith(c + c, i) else 1)
    return None


def _f_escape_end(text, i, raw):
    """Past the backslash at `i` of an f-string's text: `\\N{NAME}` whole (not raw), a backslash
    alone before a brace (which keeps its meaning), else the backslash and the character after."""
    after = text[i + 1 : i + 2]
    if after == "N" and not raw and text.startswith("{", i + 2):
        close, newline = text.find("}", i + 3), text.find("\n", i)
        return i + 1 if close < 0 or 0 <= newline < close else close + 1
    return i + 1 if after in ("{", "}", "") else i + 2


def _field_end(text, i, end, quote, raw):
    """Past the `}` of the replacement field whose expression starts at `i` (nested brackets,
    strings, f-strings, a format spec with fields of its own; lines and comments, as Python 3.12
    allows), or None."""
    depth = 0
    while i is not None and i < end:
        i = _F_CODE.match(text, i, end).end()
        c = text[i : min(i + 1, end)]
        if c in ("", "\n"):
            return None
        if c in "\"'#":
            i = _field_piece_end(text, i, end)
            continue
        if c == "}" and not depth:
            return i + 1
        if c == ":" and not depth:
            return _format_spec_end(text, i + 1, end, quote, raw)
        depth += (c in "([{") - (c in ")]}")
        i += 1
    return None


def _format_spec_end(text, i, end, quote, raw):
    """Past the `}` that ends a field whose format spec starts at `i` (`{w}` in it is a field)."""
    while i < end:
        c = text[i]
        if c == "}":
            return i + 1
        if c == quote or c == "\n":
            return None
        if c == "{":
            i = _field_end(text, i + 1, end, quote, raw)
            if i is None:
                return None
        else:
            i = _f_escape_end(text, i, raw) if c == "\\" else i + 1
    return None


def _field_piece_end(text, i, end):
    """Past the one-line string (or f-string) that starts with the quote at `i` of a field, or the
    comment that starts there, or None."""
    quote = text[i]
    if quote == "#":
        newline = text.find("\n", i, end)
        return None if newline < 0 else newline
    start = i
    while start > 0 and text[start - 1] in "rRbBfFtTuU":
        start -= 1
    prefix = text[start:i].lower()
    if "f" in prefix or "t" in prefix:
        return _fstring_end(text, i + 1, end, quote, "r" in prefix)
    found = _PY_STRINGS[quote].match(text, i, end)
    return found.end() if found else None


# A double-quoted shell string with no `$(` and no `${...}` holding a quote or brace: the common
# case, read inside the regex engine. Any other is read by _h_interpolating_dq.
_SH_DQ_PLAIN = r'"(?:[^"\\$]|\\[\s\S]|\$(?![({])|\$\{[^"\'{}\\]*\})*"'


def _h_interpolating_dq(state, m, read):
    """A double-quoted string whose inside holds code with quotes of its own: a shell `$(...)` or
    `${...}` (`"$(grep "f(" x)"` is one string; read: _sh_dq_end), a Ruby `#{...}` (_rb_dq_end).
    One that does not end within _NESTED_READ_LIMIT characters is read as before: to the next `"`."""
    found = read(state.text, m.end(), min(state.end, m.end() + _NESTED_READ_LIMIT))
    if found is None:  # (that read looked far ahead: an edit there may let it end, _far_end)
        state.uncertain = True
        return _read_as_plain(state, m, _DQ_MULTI_STRING)
    return found


_SH_DQ_TEXT = _LazyPattern(r'[^"\\$`]*')  # text of a double-quoted string with no meaning here
_SH_CODE = _LazyPattern(r"[^()'\"\\$`{}#]*")  # code of a substitution with no meaning here


def _sh_dq_end(text, i, end):
    """Past the `"` that ends the double-quoted string whose text starts at `i`, or None."""
    while i is not None and i < end:
        i = _SH_DQ_TEXT.match(text, i, end).end()
        c = text[i : min(i + 1, end)]
        if c in ('"', ""):
            return i + 1 if c else None
        opens = text[i + 1 : i + 2]
        if c == "$" and opens in ("(", "{"):
            i = _sh_code_end(text, i + 2, end, ")" if opens == "(" else "}")
        elif c == "`":
            i = _sh_quoted_end(text, i, end)
        else:  # a backslash and what it escapes, or a `$` before something else
            i += 2 if c == "\\" else 1
    return None


def _sh_code_end(text, i, end, closer):
    """Past the `closer` (`)` of `$(`, `}` of `${`) that ends the code starting at `i`, or None:
    nested brackets, quotes, substitutions and comments of its own."""
    depth = 0
    while i < end:
        i = _SH_CODE.match(text, i, end).end()
        c = text[i : min(i + 1, end)]
        if c == "":
            return None
        if c == closer and not depth:
            return i + 1
        if c in "'\"`#\\":
            i = _sh_quoted_end(text, i, end)
            if i is None:
                return None
            continue
        depth += (c in "({") - (c in ")}")
        i += 1
    return None


def _sh_quoted_end(text, i, end):
    """Past the quoted piece, escape or comment starting at `i` in a substitution's code, or None."""
    c = text[i]  # (a backquote: to the next one, as a single quote)
    if c == '"':
        return _sh_dq_end(text, i + 1, end)
    if c == "\\":
        return i + 2
    if c == "#" and i and not text[i - 1].isspace():  # (`$#`, `a#b`: no comment)
        return i + 1
    close = text.find("\n" if c == "#" else c, i + 1, end)
    return None if close < 0 else close + (0 if c == "#" else 1)


def _shell_family(language):
    skips = [
        ("comment", r"#(?<![^\s;&|(]#)[^\n]*"),
        ("string", r"\$'[^'\\]*(?:\\[\s\S][^'\\]*)*'"),
        ("string", r"'[^']*'"),
        ("string", _SH_DQ_PLAIN),
        ("string", r"`[^`\\]*(?:\\[\s\S][^`\\]*)*`"),
        ("string", r"\\[\s\S]"),
    ]
    specials = [
        (
            "string",
            r"<<(?!<)-?[ \t]*(?P<sh_q>['\"]?)(?P<sh_word>[A-Za-z_]\w*)(?P=sh_q)",
            _h_heredoc,
            ("sh_word",),
        ),
        ("code", r"c(?<![\w$-]c)ase(?![\w-])", _h_case, None),
        ("code", r"e(?<![\w$-]e)sac(?![\w-])", _h_esac, None),
        ("string", '"', _h_interpolating_dq, _sh_dq_end),
        ("string", "'" + _TO_EOL, _h_unclosed, "'"),
        ("string", "`" + _TO_EOL, _h_unclosed, "`"),
    ]
    return "()[]{}", {}, skips, specials


_YAML_VALUE_END = r"(?=[ \t]*(?:[\r\n,\]}]|#|$)|:)"  # (what may follow a quoted value)


def _yaml_family(language):
    # A quote opens a string only at the start of a scalar: `it's` is plain text.
    sq_start, dq_start = "'(?<![^\\s\\[{,]')", '"(?<![^\\s\\[{,]")'
    sq_body, dq_body = r"[^']*(?:''[^']*)*'", r'[^"\\]*(?:\\[\s\S][^"\\]*)*"'
    skips = [
        ("comment", r"#(?<![^\s]#)[^\n]*"),
        # a value's quotes (after `key: ` or `- `): what follows the closing one must end the value,
        # else that quote opened the next value and this one's was dropped (`restart: "always`
        # above `- "3001:3306"`): reported unclosed, below
        ("string", "'(?:(?<=:[ \t]')|(?<=\\s-[ \t]'))" + sq_body + _YAML_VALUE_END),
        ("string", '"(?:(?<=:[ \t]")|(?<=\\s-[ \t]"))' + dq_body + _YAML_VALUE_END),
        ("string", sq_start + "(?<!:[ \t]')(?<!\\s-[ \t]')" + sq_body),
        ("string", dq_start + '(?<!:[ \t]")(?<!\\s-[ \t]")' + dq_body),
    ]
    block = r"[-+0-9]*[ \t]*(?:#[^\n]*)?(?=\r?\n)"
    specials = [
        ("string", r"\|(?<=\s\|)" + block, _h_yaml_block, None),
        ("string", r">(?<=\s>)" + block, _h_yaml_block, None),
        ("string", sq_start + _TO_EOL, _h_unclosed, "'"),
        ("string", dq_start + _TO_EOL, _h_unclosed, '"'),
        ("string", r"(?<=\S)[ \t]+[\[{]", _h_yaml_mid_scalar, None),
    ]
    return "[]{}", {}, skips, specials


def _h_yaml_mid_scalar(state, m, arg):
    """A `[` or `{` after a word and spaces: inside a plain scalar (`name: Fix parser [WIP`) it is
    text, and so is the rest of the line; after a tag, an anchor or an indicator (`!set {a: 1}`,
    `&x [1]`, `key: [1]`, `- [a]`, `a, [b]`) it opens a flow collection, read as a bracket."""
    text = state.text
    word_start = max(text.rfind(c, state.start, m.start()) for c in " \t\n") + 1
    word = text[max(word_start, state.start) : m.start()]
    if word[:1] in "!&" or word.endswith((":", ",", "-", "?", "[", "{")):  # (`""[:1]` too)
        return m.end() - 1
    newline = text.find("\n", m.end(), state.end)
    return state.end if newline < 0 else newline


def _toml_family(language):
    skips = [  # (a multi-line string may end in one or two quotes of its own: `"""a"""""`)
        ("comment", r"#[^\n]*"),
        ("string", _TRIPLE_DQ + '"{0,2}'),
        ("string", r"'''[\s\S]*?''''{0,2}"),
        ("string", '"(?!"")' + _DQ_BODY + '"'),
        ("string", r"'(?!'')[^'\n]*'"),
    ]
    specials = [
        ("string", '"""' + _TO_EOF, _h_unclosed, '"""'),
        ("string", "'''" + _TO_EOF, _h_unclosed, "'''"),
        ("string", '"' + _TO_EOL, _h_unclosed, '"'),
        ("string", "'" + _TO_EOL, _h_unclosed, "'"),
    ]
    return "()[]{}", {}, skips, specials


def _ruby_family(language):
    skips = [
        ("comment", r"#[^\n]*"),
        ("comment", r"=(?<![^\n]=)begin\b[\s\S]*?\n=end\b[^\n]*"),
        ("comment", r"_(?<![^\n]_)_END__\r?(?:\n[\s\S]*)?$"),  # the program ends there
        ("code", r"\$(?<!\\\$)[\"'`/;]"),  # the globals $" $' $` $/ $;
        ("string", r"\?(?<=[\s(,\[=!|&]\?)[^\w\s\\](?![^\s.,;)\]}])"),  # a character literal: ?) ?/
        ("string", r'"(?:[^"\\#]|\\[\s\S]|#(?!\{))*"'),  # a string with no #{...}
        ("string", _SQ_MULTI),
        ("string", r"`[^`\\]*(?:\\[\s\S][^`\\]*)*`"),
    ]
    specials = [
        ("string", '"', _h_interpolating_dq, _rb_dq_end),
        ("string", "%", _h_ruby_percent, None),
        (
            "string",
            r"<<[~-]?(?P<rb_q>['\"`]?)(?P<rb_word>[A-Z_][A-Z0-9_]*)(?P=rb_q)",
            _h_heredoc,
            ("rb_word",),
        ),
        ("string", "/", _h_slash, _RUBY_REGEX_WORDS),
        ("string", "'" + _TO_EOL, _h_unclosed, "'"),
        ("comment", r"=(?<![^\n]=)begin\b", _h_read_as_code, None),  # (no =end after it)
        ("string", "`", _h_read_as_code, None),  # (no closing backtick)
    ]
    return "()[]{}", {}, skips, specials


def _rb_dq_end(text, i, end, closer='"', opener="#{", one_line=False):
    """Past the `closer` that ends the interpolating string whose text starts at `i`, or None:
    Ruby `#{...}`, or with `opener` Kotlin `${...}`, Swift `\\(...)`; with `one_line`, its text
    (not the code of its interpolations) ends on its line."""
    while i < end:
        c = text[i]
        if c == closer:
            return i + 1
        if c == "\n" and one_line:
            return None
        if text.startswith(opener, i):
            i = _rb_code_end(text, i + len(opener), end, opener, one_line)
            if i is None:
                return None
        else:
            i += 2 if c == "\\" else 1
    return None


def _rb_code_end(text, i, end, opener="#{", one_line=False):
    """Past the `}` (or `)` after a `\\(`) that ends the interpolated code starting at `i` (nested
    brackets and strings)."""
    close = ")" if opener.endswith("(") else "}"
    depth = 0
    while i < end:
        c = text[i]
        if c == close and not depth:
            return i + 1
        if c in "\"'`":
            i = (
                _rb_dq_end(text, i + 1, end, c, opener, one_line)
                if c != "'"
                else _perl_body_end(text, i, end)
            )
            if i is None:
                return None
            continue
        depth += (c == opener[-1]) - (c == close)
        i += 2 if c == "\\" else 1
    return None


def _h_template_dq(state, m, opener):
    """A Kotlin or Swift string whose `${...}` or `\\(...)` holds code with strings and brackets
    of its own (`"${f("{")}"`, code over lines too): read to the quote that ends it (_rb_dq_end),
    its text on one line; one that does not end so is reported `unclosed`, and the scan goes on
    at the end of its line."""
    found = _rb_dq_end(state.text, m.end(), min(state.end, m.end() + _NESTED_READ_LIMIT), '"', opener, True)
    return _unclosed_to_line_end(state, m) if found is None else found


_RUBY_PERCENT = _LazyPattern(r"%[qQwWiIrsx]?[^\w\s]")


def _h_ruby_percent(state, m, arg):
    """`%w(...)`, `%Q[...]`, `%r{...}`, `%(...)`: a literal, read like a Perl quote, unless the `%`
    is the modulo operator (_ruby_modulo)."""
    text = state.text
    literal = _RUBY_PERCENT.match(text, m.start(), state.end)
    if literal is None or _ruby_modulo(text, m.start(), literal.group()):
        return None
    end = min(state.end, m.start() + _NESTED_READ_LIMIT)
    return _far_end(state, _modifiers_end(text, _perl_body_end(text, literal.end() - 1, end), end))


def _far_end(state, found):
    """`found`, where a construct that may span lines ends; None (it was read as code: no end
    follows) makes the scan `uncertain`, since an edit far below may add that end (_Marks)."""
    if found is None:
        state.uncertain = True
    return found


def _h_read_as_code(state, m, arg):
    """The start of a construct over lines (`=begin`, a backtick, `=pod`) whose end is nowhere
    after it: read as code, and the scan is `uncertain` from here (_far_end)."""
    state.uncertain = True
    return None


def _ruby_modulo(text, at, literal):
    """Whether the `%` at `at` is the modulo operator: right after an operand (`a%b`, `x[1]%2`), or
    after one and spaces when a space or a letter-less delimiter follows (`a % b`) or the operand
    is no method name (`x %(y)` after a value; `puts %(y)` is a literal)."""
    if _ruby_operand(text[at - 1 : at]):
        return True
    k = at
    while k > 0 and text[k - 1] in " \t":
        k -= 1
    if k == at or not _ruby_operand(text[k - 1 : k]):
        return False
    word = _ruby_word_before(text, k)
    if word in _RUBY_KEYWORDS_BEFORE_VALUE:
        return False  # `if a and %r%x%i =~ b`: no value ends in a keyword
    typed = literal[1].isalpha()  # `text.sub %r%^a%i, ''`: a method's argument
    return word is None or not (typed or literal.endswith(("(", "[", "{", "<", "|", "!")))


def _ruby_operand(char):
    """Whether `char` (one character or none) can end an operand: a name, a number, a closer, a quote."""
    return bool(char) and (char.isalnum() or char in "_)]}\"'")


def _ruby_word_before(text, k):
    """The identifier ending at `k` when it is a method called without parentheses (`puts %(x)`,
    `fp.puts %w(a)`): not a local variable or a constant; None otherwise."""
    start = k
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_?!"):
        start -= 1
    word = text[start:k]
    if not word or word[0].isupper() or word[0].isdigit():
        return None
    return word if (start and text[start - 1] == ".") or word in _RUBY_PERCENT_CALLS else None


_RUBY_KEYWORDS_BEFORE_VALUE = frozenset("return when in and or not if unless while until yield".split())
_RUBY_PERCENT_CALLS = _RUBY_KEYWORDS_BEFORE_VALUE | frozenset(
    "puts print p raise require include extend attr_reader attr_accessor private public protected eval system exec".split()
)


# Perl's quote-like operators (q qq qw qr m s tr y) and the delimiter that follows: right after the
# name, or an opening bracket after spaces; not a hash key, method, sigil, file test (-s) or `y =>`.
_PERL_QUOTE_AFTER = r"(?=[^\w\s)\]}>;=:]|\s*[\[({<])"


def _perl_quote(name):
    return name[0] + rf"(?<![\w$@%&*>:-]{name[0]})" + re.escape(name[1:]) + _PERL_QUOTE_AFTER


def _perl_family(language):
    skips = [
        ("comment", r"#(?<!\$#)[^\n]*"),
        ("comment", r"=(?<![^\n]=)[a-zA-Z]\w*[\s\S]*?\n=cut\b[^\n]*"),
        ("code", r"\$(?<!\\\$)[\]\"'`/]"),  # special variables: $] (the version), $", $', $`, $/
        ("code", r"\$(?<![\\$]\$)\("),  # $( and $) (the group ids), not a prototype's `($)`
        ("code", r"\$(?<![(;\\$@%&*]\$)\)"),
        ("code", "//"),  # defined-or, or an empty pattern (`split //`): never a `/` that opens one
        ("comment", r"_(?<![^\n]_)_(?:END|DATA)__\b[\s\S]*"),  # the program ends there
        ("string", _DQ_MULTI),
        ("string", _SQ_MULTI),
    ]
    specials = [(
        "string", _perl_quote(name), _h_perl_quote, 2 if name in ("s", "tr", "y") else 1
    ) for name in ("qq", "qw", "qr", "q", "m", "s", "tr", "y")]  # fmt: skip
    specials += [
        ("code", r"~(?<=[=!]~)", _h_perl_bound, None),  # `=~ /x/`: a match, over lines with /x
        (
            "string",
            r"<<~?(?:(?P<pl_q>['\"])(?P<pl_word>[^'\"\n]+)(?P=pl_q)|(?P<pl_bare>[A-Z_][A-Z0-9_]*))",  # (<<'.' too)
            _h_heredoc,
            ("pl_word", "pl_bare"),
        ),
        ("string", "/", _h_slash, _PERL_REGEX_WORDS),
        ("string", '"' + _TO_EOL, _h_unclosed, '"'),
        ("string", "'" + _TO_EOL, _h_unclosed, "'"),
        ("comment", r"=(?<![^\n]=)[a-zA-Z]\w*", _h_read_as_code, None),  # (POD with no =cut after it)
    ]
    return "()[]{}", {}, skips, specials


_PERL_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _h_perl_bound(state, m, arg):
    """`=~` or `!~` before a `/`: that match (which may span lines) and its modifiers, skipped."""
    text, end = state.text, min(state.end, m.end() + _NESTED_READ_LIMIT)
    i = _skip_spaces(text, m.end(), end)
    if text[i : i + 1] != "/":
        return None
    return _far_end(state, _modifiers_end(text, _perl_body_end(text, i, end), end))


def _h_perl_quote(state, m, parts):
    """A quote-like operator: its `parts` delimited bodies (`s{a}{b}`, `s/a/b/`, `qw(a b)`) and its
    modifiers, skipped; None (the name was code) when they do not end within _NESTED_READ_LIMIT."""
    text, end = state.text, min(state.end, m.end() + _NESTED_READ_LIMIT)
    i = _perl_body_end(text, _skip_spaces(text, m.end(), end), end)
    if i is not None and parts == 2:
        opener = text[_skip_spaces(text, m.end(), end)]
        i = _perl_body_end(text, _skip_spaces(text, i, end) if opener in _PERL_PAIRS else i - 1, end)
    return _far_end(state, _modifiers_end(text, i, end))


_QUOTE_MODIFIERS = _LazyPattern(r"[^\W\d_]*")


def _modifiers_end(text, i, end):
    """Past the modifier letters at `i` that end a regex or quote (`/gi`, `}x`); None for None."""
    return None if i is None else _QUOTE_MODIFIERS.match(text, i, end).end()


def _skip_spaces(text, i, end):
    while i < end and text[i].isspace():
        i += 1
    return i


def _perl_body_end(text, i, end):
    """Past the delimiter that closes the body opened by the delimiter at `i` (brackets nest,
    a backslash escapes), or None."""
    if i >= end:
        return None
    opener = text[i]
    closer, depth = _PERL_PAIRS.get(opener, opener), 0
    i += 1
    while i < end:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == closer and not depth:
            return i + 1
        depth += (c == opener != closer) - (c == closer != opener)
        i += 1
    return None


def _sql_family(language):
    skips = [
        ("comment", r"--[^\n]*"),
        ("comment", _BLOCK_COMMENT),
        ("string", r"'[^']*(?:''[^']*)*'"),
        ("string", r'"[^"]*"'),
        ("string", r"`[^`]*`"),
        ("string", r"\$(?P<sql_tag>(?:[A-Za-z_]\w*)?)\$[\s\S]*?\$(?P=sql_tag)\$"),
    ]
    specials = [
        ("comment", _BLOCK_COMMENT_OPEN, _h_unclosed, "/*"),
        ("string", r"\$(?:[A-Za-z_]\w*)?\$" + _TO_EOF, _h_unclosed, "$$"),
        ("string", "'" + _TO_EOL, _h_unclosed, "'"),
        ("string", '"' + _TO_EOL, _h_unclosed, '"'),
    ]
    return "()[]{}", {}, skips, specials


def _lua_family(language):
    skips = [
        ("comment", r"--\[(?P<lua_c>=*)\[[\s\S]*?\](?P=lua_c)\]"),
        ("comment", r"--(?!\[=*\[)[^\n]*"),
        ("string", r"\[(?P<lua_s>=*)\[[\s\S]*?\](?P=lua_s)\]"),
        ("string", _DQ),
        ("string", _SQ),
    ]
    specials = [
        ("comment", r"--\[=*\[" + _TO_EOF, _h_unclosed, "--[["),
        ("string", r"\[=*\[" + _TO_EOF, _h_unclosed, "[["),
        ("string", '"' + _DQ_BODY, _h_unclosed, '"'),
        ("string", "'" + _SQ_BODY, _h_unclosed, "'"),
    ]
    return "()[]{}", {"[": r"\[(?!=*\[)"}, skips, specials


_HASKELL_COMMENT_TOKENS = _LazyPattern(r"\{-|-\}")


def _haskell_family(language):
    skips = [
        ("comment", r"--+(?![-!#$%&*+./<=>?@\\^|~:])[^\n]*"),
        ("string", _DQ),
        ("string", r"'(?<![\w']')(?:[^'\\\n]|\\[^'\n]{1,8}|\\')'"),
    ]
    specials = [
        ("comment", r"\{-", _h_nested_comment, (_HASKELL_COMMENT_TOKENS, "{-")),
        ("string", '"' + _DQ_BODY, _h_unclosed, '"'),
    ]
    return "()[]{}", {"{": r"\{(?!-)"}, skips, specials


def _css_family(language):
    skips = [("comment", _BLOCK_COMMENT), ("string", r"u(?<![\w-]u)rl\(\s*(?![\s\"'])[^)\n]*\)")]
    if language == "scss":
        skips.append(("comment", _LINE_COMMENT))
    skips += [("string", _DQ), ("string", _SQ)]
    specials = [
        ("comment", _BLOCK_COMMENT_OPEN, _h_unclosed, "/*"),
        ("string", '"' + _DQ_BODY, _h_unclosed, '"'),
        ("string", "'" + _SQ_BODY, _h_unclosed, "'"),
    ]
    return "()[]{}", {}, skips, specials


def _json_family(language):
    skips = [("string", _DQ), ("comment", _LINE_COMMENT), ("comment", _BLOCK_COMMENT)]
    specials = [
        ("comment", _BLOCK_COMMENT_OPEN, _h_unclosed, "/*"),
        ("string", '"' + _DQ_BODY, _h_unclosed, '"'),
    ]
    return "()[]{}", {}, skips, specials


_FAMILY_FUNCTIONS = {
    "c": _c_family,
    "js": _js_family,
    "go": _go_family,
    "rust": _rust_family,
    "python": _python_family,
    "shell": _shell_family,
    "yaml": _yaml_family,
    "toml": _toml_family,
    "ruby": _ruby_family,
    "perl": _perl_family,
    "sql": _sql_family,
    "lua": _lua_family,
    "haskell": _haskell_family,
    "css": _css_family,
    "json": _json_family,
}
_FAMILIES = {lang.id: _FAMILY_FUNCTIONS[lang.family] for lang in LANGUAGE_TABLE if lang.family}


# --- 6.3 The bracket scanner ----------------------------------------------------------------------
# Stack items are pairs (offset, code): code 1..3 is the bracket group that opened it, 6 a shell
# `case` (its patterns end with a lone `)`), 7 a template literal's `${`; offset -1 stands for an
# opener from before where the scan started (a placeholder).

_CASE_CODE, _TEMPLATE_CODE = 6, 7
_SIGNATURE_LOOKAHEAD = 4  # blocks after a line whose signature may still contain it (`@A({..})`)
_LINE_BLOCKS = 16  # ... where a block of one line (the `= {}` default of a parameter) counts 1/16


def _block_weight(text, brace, close):
    """What the block (brace, close) takes of a signature's look-ahead: all of one block of
    several lines, 1/_LINE_BLOCKS of one of one line (Compose's `onX: () -> Unit = {}` on each
    parameter used up the look-ahead before the body; all of them would read a file of
    `const aN = {x: N};` lines to its end)."""
    return _LINE_BLOCKS if text.find("\n", brace, close) >= 0 else 1


_MAX_RECOVERY_DEPTH = 200  # how deep a closer looks for its opener (bounds pathological input)


# Token roles: what the tail group of a tokenizer branch means (_Spec.roles).
_OPEN, _CLOSE, _SKIP, _TEMPLATE, _HANDLED = "open", "close", "skip", "template", "handled"


class _Tokens:
    """The one token loop of every scanner: iterating gives the match of each token of
    text[pos:end] in order; `spec.roles[m.lastindex]` says what it is. A consumer that read on
    past a token (a handler, a template literal resumed after `${...}`) sets `resume` to where
    the tokens go on."""

    __slots__ = ("regex", "text", "pos", "end", "resume")

    def __init__(self, spec, text, pos, end):
        self.regex, self.text, self.pos, self.end, self.resume = spec.regex, text, pos, end, None

    def __iter__(self):
        regex, text, pos, end = self.regex, self.text, self.pos, self.end
        while True:
            for m in regex.finditer(text, pos, end):
                yield m
                if self.resume is not None:
                    break
            else:
                return
            pos, self.resume = self.resume, None


class _Spec:
    """A compiled tokenizer: regex plus what each branch's tail group means."""

    __slots__ = (
        "regex",
        "nb",
        "roles",
        "handlers",
        "kinds",
        "symbols",
        "brace_group",
        "substitutions",
    )


class _State:
    """Mutable scan state shared by the loop and the handlers."""

    __slots__ = (
        "text",
        "start",
        "end",
        "spec",
        "stack",
        "problems",
        "pairs",
        "cnt",
        "templates",
        "missing_heredocs",
        "uncertain",
        "stopped",
    )

    def __init__(self, text, spec, start, end, pairs=None):
        self.text, self.spec, self.start, self.end = text, spec, start, end
        self.stack, self.problems, self.pairs = [], [], pairs
        self.cnt = [0] * (2 * spec.nb + 1)
        self.templates, self.missing_heredocs = [], set()
        # an unterminated string or comment was decided by looking to the end of the text (or of
        # a long line): a later saved state could be undone by an edit after it (_Marks)
        self.uncertain = False
        self.stopped = None  # where a scan `until_empty` stopped

    def checkpoint(self, pos):
        """This state saved at `pos` (a _Saved), or None where no later scan may resume: a heredoc
        whose end was not found, or an unterminated string, was decided by the text after it."""
        if self.missing_heredocs or self.uncertain or len(self.stack) > _MAX_SAVED_DEPTH:
            return None
        return _Saved(pos, tuple(self.stack), tuple(self.templates), len(self.problems))

    @staticmethod
    def moved_stack(stack, moved):
        """A saved stack with its offsets moved by `moved` (_Moves.moved)."""
        return tuple((moved(offset), code) for offset, code in stack)

    def same_as(self, saved, moved):
        """Whether this state equals `saved` of the text before an edit, its offsets moved."""
        return (
            not self.missing_heredocs
            and tuple(self.stack) == self.moved_stack(saved.stack, moved)
            and tuple(self.templates) == tuple(map(moved, saved.templates))
        )


_SPEC_CACHE = {}


_GROUP_OPENS = _LazyPattern(r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|(\((?!\?)|\(\?P<)")


def _groups_in(pattern):
    """re.compile(pattern).groups without compiling it: the `(` that open a group (not escaped,
    not in a character class, not `(?` unless `(?P<`)."""
    return sum(1 for opened in _GROUP_OPENS.findall(pattern) if opened)


def _token_spec(language, brackets="()[]{}", keeps="()[]{}"):
    """The (cached) tokenizer of `language` capturing only `brackets`; with none (the quick
    check's walk), `keeps` names the brackets the walk counts in the code between tokens."""
    key = (language, brackets, "" if brackets else keeps)  # (keeps only shapes a walk's spec)
    spec = _SPEC_CACHE.get(key)
    if spec is None:
        spec = _SPEC_CACHE[key] = _build_spec(language, brackets, keeps)
    return spec


def _plain_templates(language, brackets, keeps):
    """The template-literal patterns of `language` taken as single tokens, with their counts of
    substitutions: for blocks only ("{}") or no bracket at all (the quick check's walk), where a
    template literal's `${...}` is no block."""
    if brackets not in ("{}", ""):
        return []
    only_braces = not any(b in (brackets or keeps) for b in "([")
    return _PLAIN_TEMPLATES.get(_FAMILIES[language], {}).get(only_braces, [])


def _build_spec(language, brackets, keeps="()[]{}"):
    allowed, overrides, skips, specials = _FAMILIES[language](language)
    pairs = [(o, c) for o, c in (("(", ")"), ("[", "]"), ("{", "}")) if o in brackets and o in allowed]
    tokens = [(_OPEN, o, overrides.get(o, re.escape(o)), None, None, 0) for o, _ in pairs]
    tokens += [(_CLOSE, c, overrides.get(c, re.escape(c)), None, None, 0) for _, c in pairs]
    tokens += [(_SKIP, kind, pattern, None, None, 0) for kind, pattern in skips]
    tokens += [
        (_TEMPLATE, "string", pattern, None, None, n)
        for pattern, n in _plain_templates(language, brackets, keeps)
    ]
    tokens += [(_HANDLED, kind, pattern, handler, arg, 0) for kind, pattern, handler, arg in specials]
    spec = _Spec()
    spec.nb = len(pairs)
    _lay_out(spec, tokens)
    spec.brace_group = next((k for k, s in spec.symbols.items() if s == "{"), 0)
    return spec


def _lay_out(spec, tokens):
    """Into `spec`: one regex branch per token (role, kind, pattern, handler, its argument, count
    of substitutions), each ending in an empty group of its own, and what that group means: its
    role, kind, handler and count, and for a bracket its symbol."""
    parts, roles, kinds, handlers, substitutions, symbols = [], [None], [None], [None], [0], {}
    for role, kind, pattern, handler, arg, count in tokens:
        inner = _groups_in(pattern)
        roles += [None] * inner + [role]
        kinds += [None] * inner + [kind]
        handlers += [None] * inner + [(handler, arg) if handler else None]
        substitutions += [0] * inner + [count]
        parts.append(pattern + "()")
        if role is _OPEN or role is _CLOSE:
            symbols[len(kinds) - 1] = kind
    spec.regex = _LazyPattern("|".join(parts))  # (a spec built for its counts compiles nothing)
    spec.roles, spec.kinds, spec.handlers = roles, kinds, handlers
    spec.symbols, spec.substitutions = symbols, substitutions


def _scan_brackets(
    text,
    spec,
    start,
    end,
    pairs=None,
    stop_after=None,
    marks=None,
    state=None,
    until_empty=False,
    skipped=None,
    skip_until=None,
):
    """Run the tokenizer over text[start:end]; returns the final _State.

    With `pairs` (a list), every matched bracket pair is appended as (open item, close offset).
    With `stop_after`, the scan stops once _SIGNATURE_LOOKAHEAD top-level blocks have closed after
    that offset (used by function_range: later code cannot enclose the line, though the line may
    be in the signature of one of the next few blocks, as in `@Anno({..}) class A {`).
    With `marks` (a _Marks), `marks.hit(state, offset)` is called at the first opener at or after
    `marks.next` and returns the next such offset, or None to stop (the incremental post-edit
    check); `state` resumes a scan from a saved state instead of starting empty. With
    `until_empty`, the scan stops where a handler's resumption leaves the stack empty (the end of
    a template literal the quick check handed over) and `state.stopped` says where. With
    `skipped` (a list), every string, comment or other token the scan skips is appended as
    (start, end, group); with `skip_until` too, the scan stops at the first such token starting at
    or after that offset, and `state.stopped` says where (the tokens before it are those a scan to
    `end` reads: each is matched against the whole text).
    """
    if state is None:
        state = _State(text, spec, start, end, pairs)
    nb, handlers = spec.nb, spec.handlers
    stack, cnt = state.stack, state.cnt
    push, pop = stack.append, stack.pop
    limit = end + 1 if stop_after is None else stop_after
    mark = end + 1 if marks is None else marks.next
    lookahead = _SIGNATURE_LOOKAHEAD * _LINE_BLOCKS
    skip_until = end + 1 if skip_until is None else skip_until
    state.stopped = None
    roles, tokens = spec.roles, _Tokens(spec, text, start, end)
    for m in tokens:
        k = m.lastindex
        role = roles[k]
        if role is _OPEN:
            s = m.start()
            if s >= mark:
                mark = marks.hit(state, s)
                if mark is None:
                    break
            push((s, k))
            cnt[k] += 1
            continue
        if role is _CLOSE:
            cnt[k] += 1
            if stack and stack[-1][1] == k - nb:
                top = pop()
                if pairs is not None:
                    pairs.append((top, m.start()))
                if not stack and m.start() > limit:
                    lookahead -= _block_weight(text, top[0], m.start())
                    if lookahead <= 0:
                        break
                continue
            resume = _close_slow(state, m.start(), k)
            if resume is not None:  # (the rest of a template literal, after its `${...}`)
                if skipped is not None:
                    skipped.append((m.start(), resume, k))
                tokens.resume = resume
        elif role is _HANDLED:
            if skipped is not None and m.start() >= skip_until:
                state.stopped = m.start()
                break
            handler, arg = handlers[k]
            resume = handler(state, m, arg)
            if skipped is not None:
                skipped.append((m.start(), m.end() if resume is None else resume, k))
            tokens.resume = resume
        else:  # a string, a comment, a template literal without `${`: skipped
            if skipped is not None:
                if m.start() >= skip_until:
                    state.stopped = m.start()
                    break
                skipped.append((m.start(), m.end(), k))
            continue
        if until_empty and resume is not None and not stack:
            state.stopped = resume
            break
    return state


def _close_slow(state, pos, k):
    """A closer that does not match the innermost opener.

    Recovery: `}` ending a template's `${` resumes the template; `)` under a shell `case` is a
    pattern. Otherwise, if an opener of the same kind is open deeper (searching at most
    _MAX_RECOVERY_DEPTH levels and never across a template or `case`), the openers above it are
    reported `unclosed` and it pairs with that one; else the closer is reported `unexpected`
    (nothing open) or `mismatched` (something else open, which stays open).
    """
    spec, stack = state.spec, state.stack
    symbol = spec.symbols[k]
    if stack:
        code = stack[-1][1]
        if code == _TEMPLATE_CODE and symbol == "}":
            stack.pop()
            return _resume_template(state, pos + 1, state.templates.pop())
        if code == _CASE_CODE and symbol == ")":
            return None
    want = k - spec.nb
    lowest = max(0, len(stack) - _MAX_RECOVERY_DEPTH)
    for i in range(len(stack) - 1, lowest - 1, -1):
        code = stack[i][1]
        if code == want:
            for item in stack[i + 1 :]:
                _report_open(state, item)
            if state.pairs is not None:
                state.pairs.append((stack[i], pos))
            del stack[i:]
            return None
        if code >= _CASE_CODE:
            break
    state.problems.append((pos, symbol, "mismatched" if stack else "unexpected"))
    return None


def _report_open(state, item):
    offset, code = item
    if code == _CASE_CODE:
        return  # a `case` we never saw end is not worth an alarm
    symbol = "${" if code == _TEMPLATE_CODE else state.spec.symbols[code]
    state.problems.append((offset, symbol, "unclosed"))


_TEMPLATE_REST = _LazyPattern(r"[^`\\$]*(?:(?:\\[\s\S]|\$(?!\{))[^`\\$]*)*(?:(`)|(\$\{))?")


def _h_template_head(state, m, arg):
    """A template literal up to its first `${`: the substitution is open, the scan goes on."""
    _open_substitution(state, m.end() - 2, m.start())
    return None


def _open_substitution(state, at, backtick):
    """A `${` at `at` of the template literal starting at `backtick`: open until its `}`."""
    state.stack.append((at, _TEMPLATE_CODE))
    state.templates.append(backtick)
    if state.spec.brace_group:
        state.cnt[state.spec.brace_group] += 1


def _h_template(state, m, arg):
    return _resume_template(state, m.end(), m.start())


def _resume_template(state, pos, backtick):
    """Continue a template literal at `pos`: to its closing backtick, or into a `${`."""
    m = _TEMPLATE_REST.match(state.text, pos, state.end)
    if m.group(1) is not None:
        return m.end()
    if m.group(2) is not None:
        _open_substitution(state, m.end() - 2, backtick)
        return m.end()
    state.problems.append((backtick, "`", "unclosed"))
    return state.end


_JS_REGEX = _LazyPattern("/" + _JS_REGEX_BODY)
_RUBY_REGEX_EOL = _LazyPattern(r"/[ \t]*\r?\n")
_RUBY_REGEX = _LazyPattern(
    r"/(?:#\{(?:[^{}]|\{[^{}]*\})*\}|#(?!\{)|[^/\\#]|\\[\s\S])*/[a-z]*"  # (any `/` ends it: `[/]` too)
)
_RUBY_BEFORE_VALUE = _LazyPattern(r"(?:[=(,\[~|&!]|\b([a-z]+))[ \t]*$")
_TRAILING_WORD = _LazyPattern(r"[\w$]+$")
_JS_LINE_COMMENT_START = _LazyPattern(  # a line's code up to a `//` that is in no string or comment
    r"""(?:[^"'`/\n]|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\\n]|\\.)*`|/\*(?:[^*\n]|\*(?!/))*\*/|/(?![/*]))*//"""
)
_JS_REGEX_WORDS = frozenset(
    "return typeof instanceof in of new delete void throw case do else yield await".split()
)
_RUBY_REGEX_WORDS = _JS_REGEX_WORDS | frozenset("if elsif unless when while until and or not puts".split())
_PERL_REGEX_WORDS = _RUBY_REGEX_WORDS | frozenset("m qr s tr y split grep join push unshift".split())


def _h_slash(state, m, words):
    """`/` not starting a comment: a regex literal or division, decided by the token before it."""
    start = m.start()
    if not _slash_starts_regex(state.text, max(state.start, start - 80), start, words, state.start):
        return None
    literal = _JS_REGEX.match(state.text, start, state.end)
    if literal is None and words is _RUBY_REGEX_WORDS and _RUBY_REGEX_EOL.match(state.text, start):
        # a Ruby regex opened at the end of its line spans lines (`/x` patterns with comments) when
        # what is before it can only be followed by a value: `re = /`, `when /`, `match(/`
        before = _RUBY_BEFORE_VALUE.search(state.text, max(state.start, start - 80), start)
        if before and (not before.group(1) or before.group(1) in words):
            literal = _RUBY_REGEX.match(state.text, start, min(state.end, start + _NESTED_READ_LIMIT))
            return _far_end(state, literal.end() if literal else None)
    return literal.end() if literal else None


_JS_SQ = _LazyPattern("'" + _SQ_BODY + "'")
# (not `do`, `new`, `else`, `in`, `of`: English words of JSX text too, "do's", "new'ish")
_JS_QUOTE_WORDS = frozenset("return typeof instanceof void throw case yield await delete".split())


def _h_quote_after_word(state, m, words):
    """A `'` right after a letter or a digit: no string start in JSX text (`Don't`), but one after
    a keyword after which a value starts (`return'(x'`, `case')':` of minified code)."""
    start = m.start()
    word = _TRAILING_WORD.search(state.text, max(state.start, start - 16), start)
    if word is None or word.group() not in words:
        return None
    literal = _JS_SQ.match(state.text, start, state.end)
    return literal.end() if literal else None


def _slash_starts_regex(text, lo, start, words, floor=0):
    jsx_end = text.startswith(">", start + 1)  # JSX `/>`, unless no operand is before it: `(/>+/)`
    end = start
    while True:
        before = text[lo:end].rstrip()
        if not before:
            return not jsx_end
        last = before[-1]
        if last.isalnum() or last in "_$":
            word = _TRAILING_WORD.search(before)
            if word is not None and word.group() in words and not jsx_end:
                return True
        elif (
            last == ")"
            and words is _JS_REGEX_WORDS
            and _statement_head_before(text, floor, lo + len(before) - 1)
        ):
            return True  # `if (s) /}/.test(s)`: after a statement's head, a value starts
        elif last not in ")]}\"'`<":  # (where an operand ends, or JSX `</`)
            if not jsx_end or not ((last == ">" and before[-2:] != "=>") or before.endswith("*/")):
                return True  # (`<T<U> />` and `<T /* c */ />` are JSX)
        if words is not _JS_REGEX_WORDS:
            return False
        end = _line_comment_start(text, lo + len(before), start)  # `// note\n/[)]/.test(s)`
        if end is None:
            return False


_STATEMENT_HEAD_WORDS = frozenset("if while for with".split())


def _statement_head_before(text, floor, close):
    """Whether the `)` at `close` ends the head of an `if`, `while`, `for` or `with` (its `(`
    within 400 characters, parentheses counted plainly)."""
    depth, pos = 0, close
    lowest = max(floor, close - 400)
    while pos >= lowest:
        char = text[pos]
        if char == ")":
            depth += 1
        elif char == "(":
            depth -= 1
            if depth == 0:
                word = _TRAILING_WORD.search(text[max(lowest, pos - 12) : pos].rstrip())
                return word is not None and word.group() in _STATEMENT_HEAD_WORDS
        pos -= 1
    return False


def _line_comment_start(text, code_end, slash):
    """Where the `//` comment ending at `code_end` starts, when it is on a line above `slash`."""
    if text.find("\n", code_end, slash) < 0:
        return None
    m = _JS_LINE_COMMENT_START.match(text, text.rfind("\n", 0, code_end) + 1, code_end)
    return m.end() - 2 if m else None


def _h_nested_comment(state, m, arg):
    """Nested block comments (Rust, Kotlin, Swift and Dart `/* /* */ */`, Haskell `{- {- -} -}`)."""
    tokens, opener = arg
    depth = 1
    for t in tokens.finditer(state.text, m.end(), state.end):
        depth += 1 if t.group() == opener else -1
        if depth == 0:
            return t.end()
    state.problems.append((m.start(), opener, "unclosed"))
    return state.end


def _h_heredoc(state, m, groups):
    """`<<WORD`: the rest of the `<<` line is code (`f(<<EOF);` closes its `(`), scanned in
    place; then skip to the line that is exactly WORD."""
    word = next((m.group(g) for g in groups if m.group(g)), None)
    if not word or word in state.missing_heredocs:
        return None
    eol = state.text.find("\n", m.end(), state.end)
    if eol < 0:
        state.missing_heredocs.add(word)  # no line after it (or the end of a scan's window)
        return None
    found = _heredoc_terminator(word).search(state.text, eol + 1, state.end)
    if found is None:
        state.missing_heredocs.add(word)
        return None
    if state.text[m.end() : eol].strip():
        _scan_brackets(state.text, state.spec, m.end(), eol, pairs=state.pairs, state=state)
    return _later_heredocs_end(state, m, eol, found.end())


def _heredoc_terminator(word):
    """The line that ends a heredoc opened with `word` (indented too, for `<<-` and `<<~`)."""
    return re.compile(r"^[ \t]*" + re.escape(word) + r"[ \t]*\r?$", re.M)


def _later_heredocs_end(state, m, eol, end):
    """Past the bodies of the heredocs opened later on the line of `m` (`f(<<~A, <<~B)`, `cat <<A
    <<B`): each follows the one before it; `end` is where the first one's ends."""
    spec, text = state.spec, state.text
    for more in m.re.finditer(text, m.end(), eol):
        k = more.lastindex
        if spec.roles[k] is not _HANDLED or spec.handlers[k][0] is not _h_heredoc:
            continue
        word = next((more.group(g) for g in spec.handlers[k][1] if more.group(g)), None)
        later = _heredoc_terminator(word).search(text, end + 1, state.end) if word else None
        if later is None:
            break
        end = later.end()
    return end


def _h_case(state, m, arg):
    state.stack.append((m.start(), _CASE_CODE))
    return None


def _h_esac(state, m, arg):
    stack = state.stack
    lowest = max(0, len(stack) - _MAX_RECOVERY_DEPTH)
    for i in range(len(stack) - 1, lowest - 1, -1):
        if stack[i][1] == _CASE_CODE:
            for item in stack[i + 1 :]:
                _report_open(state, item)
            del stack[i:]
            break
    return None


_YAML_KEY_INDENT = _LazyPattern(r"[ \t]*(?:-[ \t]+)*")
_YAML_BLOCK_CACHE = {}


def _h_yaml_block(state, m, arg):
    """A block scalar (`key: |`): its lines are the following ones indented deeper than the key."""
    text = state.text
    line_start = max(state.start, text.rfind("\n", state.start, m.start()) + 1)
    indent = _YAML_KEY_INDENT.match(text, line_start).end() - line_start
    body = _YAML_BLOCK_CACHE.get(indent)
    if body is None:
        body = _YAML_BLOCK_CACHE[indent] = re.compile(
            r"(?:\n(?:[ \t]*(?=\r?\n|$)| {" + str(indent + 1) + r",}[^\n]*))*"
        )
    return body.match(text, m.end(), state.end).end()


# --- 6.4 Balance ----------------------------------------------------------------------------------


def check_balance(text, language, verbose=False):
    """Check brackets, quotes and (for markup) tags of a whole file (docs/cli.md#balance-func-range-tag-range).

    Returns {"status": "balanced"|"unbalanced", "unmatched": [...], "counts": {...}} and, when
    `verbose`, "pairs": [{"open", "close", "start_line", "start_column", "end_line", "end_column"}].
    For an unknown language: {"status": "not_checked", "reason": ..., "unmatched": [], "counts": {}}.

    unmatched: [{"symbol", "line", "column", "problem"}], ordered by position; line and column are
    1-based, the column counts characters. problem is
      - "unclosed": an opener never closed, or an unterminated string/comment/template reported
        where it starts (symbol is the quote: '"', "'", '\"\"\"', '`', '/*', ...);
      - "unexpected": a closer while nothing is open;
      - "mismatched": a closer that matches no open bracket while another one is open (the open one
        stays open). A closer that matches an opener deeper in the stack closes it, and every opener
        above it is reported "unclosed".
    counts: occurrences outside strings and comments, one key per symbol seen, e.g.
    {"(": 3, ")": 3, "{": 1, "}": 1}; a template literal's `${` counts as "{". For markup, tags
    count as "<name>" (open), "</name>" (close) and "<name/>" (self-closing); text between tags is
    prose, so its brackets are not checked; <script>/<style> bodies are checked as JS/CSS and their
    brackets counted. Markdown checks only fenced code blocks with a known language.

    Leniency (no false alarms on valid code): a quote right after a letter is no JS/JSX string
    (`Don't`) unless the word is a keyword a value follows (`return'x'`), nor a C++ char (`1'000`); YAML quotes open strings only at a scalar's start, YAML
    block scalars (`run: |`) and parentheses are not checked; shell `case` patterns may end in a
    lone `)`; heredocs are skipped; an unclosed HTML element with an optional end tag (`<li>`,
    `<p>`, ...) is fine. Known limit: a string nested inside an interpolation of another string
    (Kotlin `"${f(")")}"`) is read as two strings.
    """
    if not isinstance(text, str):
        raise TypeError(f"check_balance() takes the text as a str, not {type(text).__name__}")
    if language not in LANGUAGES:
        reason = "unknown language" if language is None else f"language {language!r} is not checked"
        return {"status": "not_checked", "reason": reason, "unmatched": [], "counts": {}}
    pairs = [] if verbose else None
    problems, counts = _balance_problems(text, language, 0, len(text), pairs)
    result = {
        "status": "unbalanced" if problems else "balanced",
        "unmatched": _unmatched_entries(text, problems),
        "counts": counts,
    }
    if verbose:
        result["pairs"] = _pair_entries(text, pairs)
    return result


def _symbol_counts(spec, cnt):
    """{bracket symbol: how many} from a scan's counts by group."""
    counts = {}
    for k, symbol in spec.symbols.items():
        if cnt[k]:
            counts[symbol] = counts.get(symbol, 0) + cnt[k]
    return counts


def _balance_problems(text, language, start, end, pairs):
    """(problems, counts) for text[start:end]; problems are (offset, symbol, problem) tuples and
    `pairs` receives (open offset, open symbol, close offset, close symbol)."""
    if language in _MARKUP_LANGUAGES:
        return _markup_balance(text, language, start, end, pairs)
    if language == "markdown":
        return _markdown_balance(text, start, end, pairs)
    if pairs is None and end - start >= _QUICK_MIN_CHARS:
        quick = _quick_balance(text, language, start, end)
        if quick is not None:
            return quick
    spec = _token_spec(language)
    raw_pairs = [] if pairs is not None else None
    state = _scan_brackets(text, spec, start, end, raw_pairs)
    for item in state.stack:
        _report_open(state, item)
    counts = _symbol_counts(spec, state.cnt)
    if raw_pairs is not None:
        for (offset, code), close in raw_pairs:
            pairs.append((offset, spec.symbols.get(code, "${"), close, text[close]))
    return state.problems, counts


# --- 6.4a The quick check of a balanced file -----------------------------------------------------
# docs/behaviour.md#balance-speed. Most files a user checks are balanced, and then no position is
# reported. The quick check lets the regex engine find only strings, comments and the other
# skipped tokens; the code between them goes to C string operations: its brackets are kept
# (bytes.translate), counted, and innermost pairs removed until nothing changes. Nothing left means
# the exact scan would report nothing either: it reads the same tokens (no skipped token starts
# with a bracket, or the language gets no quick check) and its stack only pops what the last
# unmatched opener pushed. Only openers left means the exact scan would report just those
# `unclosed`: they are located by scanning exactly the joins they were opened in. Anything else (a
# closer left unpaired, a handler's problem or `case`, deep nesting) returns None and the exact
# scan decides. A template literal's `${...}` is scanned exactly, unless the substitution holds
# nothing but plain code and complete strings (one token, counted here).

_QUICK_PASSES = 48  # innermost-pair removals before the quick check leaves deep nesting to the exact scan
_QUICK_FLUSH = 4096  # code pieces joined at a time (bounds the quick check's memory)
_QUICK_OPEN = 4096  # brackets open at once beyond which the quick check gives up (each join rescans them)
_QUICK_MIN_CHARS = 512  # shorter texts go to the exact scan at once: the quick check's set-up costs more
_QUICK_CACHE = {}


class _Quick:
    """The quick walk of one language over the brackets `keeps`: its tokenizer (_token_spec with no
    bracket), the exact scan's tokenizer for those brackets and its groups' symbols, and the bytes
    to delete to keep only those brackets."""

    __slots__ = ("spec", "exact", "delete", "symbols")


def _quick_spec(language, keeps="()[]{}"):
    """The (cached) quick walk of `language` counting `keeps` (all brackets: the quick check; "{}":
    where function_range may restart), or None where a skipped token may start with a bracket
    (Lua `[[`, Haskell `{-`): there a bracket is not always a token of its own."""
    key = (language, keeps)
    if key in _QUICK_CACHE:
        return _QUICK_CACHE[key]
    allowed, overrides, skips, specials = _FAMILIES[language](language)
    patterns = [pattern for _, pattern in skips] + [pattern for _, pattern, _, _ in specials]

    def first(pattern):
        return pattern[1] if pattern.startswith("\\") else pattern[0]

    quick = None
    if not overrides and not any(first(p) in "()[]{}" for p in patterns):
        quick = _Quick()
        quick.spec = _token_spec(language, "", keeps)
        quick.exact = _token_spec(language, keeps)
        quick.symbols = quick.exact.symbols
        keep = {ord(symbol) for symbol in quick.symbols.values()}
        quick.delete = bytes(b for b in range(256) if b not in keep)
    _QUICK_CACHE[key] = quick
    return quick


def _quick_balance(text, language, start, end):
    """(problems, counts) of text[start:end] as the exact scan gives them, when the quick check can
    tell: no problem at all, or only openers left open (located by scanning exactly the few joins
    where they were opened: _quick_unclosed); else None, and the exact scan must answer."""
    quick = _quick_spec(language)
    walked = _quick_walk(text, quick, start, end) if quick else None
    if walked is None:
        return None
    joins, left, totals, state, braces = walked
    found = _quick_unclosed(text, quick.exact, start, end, joins, len(left)) if left else []
    if found is None:
        return None
    counts = {}
    for k, symbol in quick.symbols.items():
        n = totals[symbol] + state.cnt[k] + (braces if symbol in "{}" else 0)
        if n:
            counts[symbol] = counts.get(symbol, 0) + n
    return found, counts


def _quick_walk(text, quick, start, end, stop=None, every=None, joins_at=None):
    """The walk of `quick` (a _Quick) over text[start:end], pairing the brackets it keeps.

    Returns (joins, the brackets left open, {symbol: count}, the _State of the substitutions
    scanned exactly, the substitutions of plain templates), or None when it gives up. joins are
    (where a join of pieces starts, the brackets open there, the lowest depth inside it), one per
    `every` pieces (default _QUICK_FLUSH); a join starts where a token starts (with `joins_at`,
    one whose first character is in it, _RESTART_TOKENS). With `stop`, the walk ends at the first
    join starting after `stop` (what is left open is then open there).
    """
    every = _QUICK_FLUSH if every is None else every
    spec, delete = quick.exact, quick.delete
    state = _State(text, spec, start, end)
    stack, problems = state.stack, state.problems
    walk = quick.spec
    handlers, substitutions = walk.handlers, walk.substitutions
    pieces, totals = [], dict.fromkeys(bytes(range(128)).translate(None, delete).decode(), 0)
    joins = []
    add = pieces.append
    braces = 0
    left = b""
    gap = joined = start
    roles, tokens = walk.roles, _Tokens(walk, text, start, end)
    for m in tokens:
        s, k = m.start(), m.lastindex
        role = roles[k]
        add(text[gap:s])
        gap = m.end()
        if len(pieces) > every and (joins_at is None or text[s] in joins_at):
            paired = _quick_pair(left, pieces, delete, totals)
            if paired is None:
                return None
            joins.append((joined, left, paired[1]))
            left, joined = paired[0], s
            pieces.clear()
            if stop is not None and joined > stop:
                return joins, left, totals, state, braces
        if role is _SKIP:
            continue
        if role is _TEMPLATE:
            braces += substitutions[k]
            continue
        handler, arg = handlers[k]
        resume = handler(state, m, arg)
        if problems:
            return None
        if stack:  # a template literal's `${` (or a shell `case`): scanned exactly until closed
            _scan_brackets(text, spec, gap if resume is None else resume, end, state=state, until_empty=True)
            if problems or stack or state.stopped is None:
                return None
            resume = state.stopped
        if resume is not None:
            gap = tokens.resume = resume
    add(text[gap:end])
    paired = _quick_pair(left, pieces, delete, totals)
    if paired is None:
        return None
    joins.append((joined, left, paired[1]))
    return joins, paired[0], totals, state, braces


class _StopAt:
    """Marks for _scan_brackets that stop the scan at its first opener at or after `next`."""

    __slots__ = ("next",)

    def __init__(self, offset):
        self.next = offset

    def hit(self, state, offset):
        return None


def _quick_unclosed(text, spec, start, end, joins, levels):
    """The `levels` openers left open at the end, as "unclosed" problems. The one at level L was
    opened in the last join whose depth went below L (its lowest depth is exact: its own unpaired
    closers popped that many); that join is scanned exactly from its start, with the brackets open
    there as placeholders, to a little past its end. None when what it finds does not agree."""
    codes = {ord(symbol): k for k, symbol in spec.symbols.items() if k <= spec.nb}
    found, ceiling = [], levels
    for index in range(len(joins) - 1, -1, -1):
        if ceiling == 0:
            break
        at, open_before, lowest = joins[index]
        if lowest >= ceiling:
            continue
        state = _State(text, spec, start, end)
        state.stack = [(-1, codes[byte]) for byte in open_before]  # (opened earlier)
        stop = joins[index + 1][0] if index + 1 < len(joins) else end + 1
        _scan_brackets(text, spec, at, end, marks=_StopAt(stop), state=state)
        if state.problems or len(state.stack) < ceiling:
            return None
        for offset, code in state.stack[lowest:ceiling]:
            if offset < 0 or code > spec.nb:
                return None
            found.append((offset, spec.symbols[code], "unclosed"))
        ceiling = lowest
    return found if ceiling == 0 else None


def _quick_pair(left, pieces, delete, totals):
    """(the brackets still open after `left`, those open so far, and the code `pieces`; the lowest
    depth reached inside the pieces), innermost pairs removed and each bracket counted into
    `totals`; None when a closer stays unpaired (no later text can pair it), the nesting needs more
    than _QUICK_PASSES removals, or more than _QUICK_OPEN brackets stay open (each join would scan
    them all again)."""
    chunk = "".join(pieces).encode("utf-8", "surrogatepass").translate(None, delete)
    for symbol in totals:
        totals[symbol] += chunk.count(symbol.encode())
    own = _quick_reduce(chunk)  # the pieces alone: closers (pairing with `left`), then openers
    if own is None:
        return None
    lowest = len(left) - (len(own) - len(own.lstrip(b")]}")))
    left = _quick_reduce(left + own)
    if left is None or lowest < 0 or left.translate(None, b"([{") or len(left) > _QUICK_OPEN:
        return None
    return left, lowest


def _quick_reduce(brackets):
    """`brackets` with innermost pairs removed until none is left, or None past _QUICK_PASSES."""
    for _ in range(_QUICK_PASSES + 1):  # (the last pass finds nothing more to remove)
        size = len(brackets)
        brackets = brackets.replace(b"()", b"").replace(b"[]", b"").replace(b"{}", b"")
        if len(brackets) == size:
            return brackets
    return None


def _merge_counts(total, more):
    for key, value in more.items():
        total[key] = total.get(key, 0) + value


def _line_columns(text, offsets):
    """{offset: (line, column)} for many offsets in one forward pass."""
    result = {}
    line, line_start, previous = 1, 0, 0
    for offset in sorted(set(offsets)):
        newlines = text.count("\n", previous, offset)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", previous, offset) + 1
        result[offset] = (line, offset - line_start + 1)
        previous = offset
    return result


def _unmatched_entries(text, problems):
    problems = sorted(problems, key=lambda p: p[0])
    where = _line_columns(text, [p[0] for p in problems])
    return [
        {"symbol": symbol, "line": where[offset][0], "column": where[offset][1], "problem": problem}
        for offset, symbol, problem in problems
    ]


def _pair_entries(text, pairs):
    pairs = sorted(pairs, key=lambda p: p[0])
    where = _line_columns(text, [p[0] for p in pairs] + [p[2] for p in pairs])
    return [
        {
            "open": open_symbol,
            "close": close_symbol,
            "start_line": where[o][0],
            "start_column": where[o][1],
            "end_line": where[c][0],
            "end_column": where[c][1],
        }
        for o, open_symbol, c, close_symbol in pairs
    ]


def new_problems(before, after):
    """Entries of after["unmatched"] that the edit introduced (docs/behaviour.md#the-post-edit-balance-check).

    Line numbers shift after an edit, so entries are compared as multisets of (symbol, problem):
    each entry of `before` explains one equal entry of `after`, first come first served.
    """
    return _unexplained(
        (before or {}).get("unmatched") or [],
        (after or {}).get("unmatched") or [],
        lambda item: (item.get("symbol"), item.get("problem")),
    )


def _unexplained(before, after, key):
    """Items of `after` that no item of `before` with the same key explains, each explaining one."""
    budget = {}
    for item in before:
        budget[key(item)] = budget.get(key(item), 0) + 1
    left = []
    for item in after:
        if budget.get(key(item), 0) > 0:
            budget[key(item)] -= 1
        else:
            left.append(item)
    return left


# --- 6.4b The incremental post-edit check ---------------------------------------------------------
# docs/behaviour.md#the-post-edit-balance-check. The scan of the file before the edit saves the
# scanner's state every _CHECKPOINT_EVERY characters. The scan of the edited text starts at the
# last saved state before the edit and stops at the first saved place after it where its state
# equals the saved one (same stack; same open templates): from there on it would repeat the old
# scan, so the old scan's later problems are taken, moved by the edit's length difference.
# Code embedded in markup (<script>, <style>) and Markdown fences is scanned again only when its
# text changed.

_CHECKPOINT_EVERY = 1 << 13  # characters between saved states of a scan
SCAN_MEMORY_CHARS = 64 << 20  # the server remembers the scan of an edited text up to this size
SCAN_FILE_MIN_CHARS = 1 << 20  # the CLI keeps scans of texts this large or larger in BASE/scans/
SCAN_FILES = 8  # ... and at most this many
_SETTLE = 256  # unchanged characters kept on each side of an edit (lookaheads, lookbehinds)
_MAX_SAVED_DEPTH = 4096  # deeper stacks are not saved (a pathological file gets fewer checkpoints)


class _Saved:
    """One saved scanner state: where, the stack, the open templates, and how many problems and
    embedded bodies (markup) the scan had found before it."""

    __slots__ = ("pos", "stack", "templates", "problems", "bodies")

    def __init__(self, pos, stack, templates, problems, bodies=0):
        self.pos, self.stack, self.templates = pos, stack, templates
        self.problems, self.bodies = problems, bodies


class _Marks:
    """Saves the state of a scan every _CHECKPOINT_EVERY characters (see _scan_brackets and
    _scan_markup, which call hit() at the first opening bracket or tag at or after `next`)."""

    __slots__ = ("next", "saved")

    def __init__(self):
        self.next, self.saved = _CHECKPOINT_EVERY, []

    def hit(self, state, pos):
        saved = state.checkpoint(pos)  # (a _State or a _MarkupState)
        if saved is not None:
            self.saved.append(saved)
        return pos + _CHECKPOINT_EVERY


class _Moves:
    """Where offsets of an old text are in the edited one: the old characters regions[i] = (a, b,
    new length) were replaced, each moving what follows by its length difference. An offset inside
    a replaced part has no place (None)."""

    def __init__(self, regions):
        self.starts = [a for a, _b, _n in regions]
        self.ends = [b for _a, b, _n in regions]
        self.after, total = [], 0
        for a, b, length in regions:
            total += length - (b - a)
            self.after.append(total)

    def moved(self, old):
        import bisect

        i = bisect.bisect_right(self.starts, old) - 1
        if i < 0:
            return old
        if old < self.ends[i]:
            return None
        return old + self.after[i]


class _Settle:
    """Compares a resumed scan of the edited text with the saved states of the old scan at the
    candidate states `order` (indices into `saved`, ascending): offsets move as `moves` says, and
    an item opened in a replaced part cannot be in both. `kind`: the scan's state class (_State
    or _MarkupState), which knows its stacks."""

    __slots__ = ("next", "saved", "order", "index", "moves", "settled", "kind")

    def __init__(self, saved, order, moves, kind):
        self.saved, self.order, self.moves, self.kind = saved, order, moves, kind
        self.index, self.settled = 0, None
        self.next = self._at(0)

    def _at(self, i):
        return self.moves.moved(self.saved[self.order[i]].pos) if i < len(self.order) else float("inf")

    def moved(self, old):
        return self.moves.moved(old)

    def moved_state(self, saved, problems_shift, bodies_shift):
        """A saved state the old scan and the new one share, as the new scan would have saved it."""
        stack = self.kind.moved_stack(saved.stack, self.moved)
        templates = tuple(self.moved(t) for t in saved.templates)
        return _Saved(
            self.moved(saved.pos),
            stack,
            templates,
            saved.problems + problems_shift,
            saved.bodies + bodies_shift,
        )

    def hit(self, state, pos):
        if state.uncertain:  # (a decision before here looked far ahead: the old states after it
            self.index = len(self.order)  # could not be resume points, as a fresh scan saves none)
            return float("inf")
        i, order = self.index, self.order
        while i < len(order) and self._at(i) < pos:
            i += 1
        if i < len(order) and self._at(i) == pos:
            if state.same_as(self.saved[order[i]], self.moved):
                self.settled = order[i]
                return None
            i += 1
        self.index = i
        return self._at(i)


class _BalanceScan:
    """The balance scan of a whole text: its problems (offset, symbol, problem) in scan order, its
    saved states, and for markup its tag problems and embedded bodies with their own problems."""

    __slots__ = ("language", "problems", "saved", "tags", "bodies")

    @classmethod
    def made(cls, language, problems, saved, tags, bodies):
        """A _BalanceScan from parts (the scan of an edited text that _rescan put together)."""
        scan = cls.__new__(cls)
        scan.language, scan.problems, scan.saved = language, problems, saved
        scan.tags, scan.bodies = tags, bodies
        return scan

    def __init__(self, text, language):
        self.language, self.tags, self.bodies, self.saved = language, None, None, None
        if language == "markdown":
            self.problems, self.bodies = _embedded_problems(text, _markdown_parts(text, 0, len(text)), {})
            return
        marks = _Marks()
        if language in _MARKUP_LANGUAGES:
            found = _scan_markup(text, language, 0, len(text), counting=False, marks=marks)
            self.tags = found.problems
            parts = [(lang, start, end, None, None) for lang, start, end in found.bodies]
            more, self.bodies = _embedded_problems(text, parts, {})
            self.problems = found.problems + more
        else:
            state = _scan_brackets(text, _token_spec(language), 0, len(text), marks=marks)
            for item in state.stack:
                _report_open(state, item)
            self.problems = state.problems
        self.saved = marks.saved


def _markdown_parts(text, start, end):
    """Markdown's fences as (language, body start, body end, unclosed fence problem or None, None)."""
    parts = []
    for language, body_start, body_end, fence_start, closed in _markdown_fences(text, start, end):
        problem = None
        if not closed:
            fence = text[fence_start:body_start].strip()[:3]
            problem = (fence_start + text[fence_start:body_start].index(fence), fence, "unclosed")
        parts.append((language, body_start, body_end, problem, None))
    return parts


def _embedded_problems(text, parts, known):
    """Problems of embedded code parts (language, start, end, own problem, _), and the list of
    (language, body text, start, problems) of every part for later reuse: a body whose text is in `known`
    ({(language, text): (start, problems)}) takes those problems instead of a new scan."""
    problems, bodies = [], []
    for language, start, end, own, _unused in parts:
        if own is not None:
            problems.append(own)
        if not language:  # not checked, but counted: saved states count every body
            bodies.append((None, "", start, []))
            continue
        body = text[start:end]
        reuse = known.get((language, body))
        if reuse is None:
            found = _balance_problems(text, language, start, end, None)[0]
        else:
            shift = start - reuse[0]
            found = [(pos + shift, symbol, problem) for pos, symbol, problem in reuse[1]]
        problems += found
        bodies.append((language, body, start, found))
    return problems, bodies


def _rescan(old, new, regions, old_length, line_ends, line_befores):
    """The scan of `new`, the old text (`old_length` characters) with the parts regions[i] = (a, b,
    new length) replaced (ascending, not overlapping; line_ends[i]: its first newline at or after
    b, or -1; line_befores[i]: its last newline before a, or -1), as a _BalanceScan. Its problems
    are those a whole scan finds, in the same order; only the text around each replaced part is
    scanned when the scan settles between them. Its saved states are the old ones where the two
    scans agree, moved."""
    if old.language == "markdown" or old.saved is None:
        known = {(lang, body): (start, found) for lang, body, start, found in old.bodies or ()}
        problems, bodies = _embedded_problems(new, _markdown_parts(new, 0, len(new)), known)
        return _BalanceScan.made(old.language, problems, None, None, bodies)
    if old.tags is not None and len(regions) > 1:  # markup: one part from the first to the last
        a, b = regions[0][0], regions[-1][1]
        regions, line_ends = [(a, b, len(new) - old_length + b - a)], line_ends[-1:]
        line_befores = line_befores[:1]
    # A scan resumes only from a state that has a newline between it and the part: a decision made
    # before that state looked ahead at most to the end of its line (farther, _Marks saved nothing)
    starts = [min(a - _SETTLE, before) for (a, _b, _n), before in zip(regions, line_befores)]
    clean = _clean_gaps(regions, line_ends, starts, old_length)
    saved, moves = old.saved, _Moves(regions)
    order = [i for i, one in enumerate(saved) if any(first <= one.pos <= last for first, last in clean)]
    resume = _last_before(saved, starts[0])
    point = saved[resume] if resume is not None else None
    states = list(saved[: resume + 1]) if resume is not None else []
    if old.tags is not None:  # saved states count tag problems
        tags = list(old.tags[: point.problems]) if point is not None else []
        return _rescan_markup(old, new, point, tags, states, _Settle(saved, order, moves, _MarkupState))
    return _rescan_brackets(old, new, resume, states, (order, moves, clean))


def _clean_gaps(regions, line_ends, starts, old_length):
    """[(first, last)]: where a saved state can be one at which the old scan and the new agree,
    once past a replaced part's last line and _SETTLE more characters, and _SETTLE characters
    before the next part (lookaheads, lookbehinds)."""
    clean = []
    for (_a, b, _length), line_end, after in zip(regions, line_ends, starts[1:] + [None]):
        first = old_length + 1 if line_end < 0 else max(b + _SETTLE, line_end + 1)
        clean.append((first, after if after is not None else old_length))
    return clean


def _rescan_brackets(old, new, resume, states, plan):
    """_rescan() of a bracket language: from the saved state `resume` (an index, or None: the
    start) to where the scan settles, then on from the saved state before the next part, until
    the last part is passed. `states`: the saved states before the resumed one; `plan`: the
    candidate states (indices), the _Moves and the clean gaps."""
    saved, (order, moves, clean) = old.saved, plan
    point = saved[resume] if resume is not None else None
    problems = list(old.problems[: point.problems]) if point is not None else []
    spec = _token_spec(old.language)
    while True:
        state = _State(new, spec, 0, len(new))
        if point is not None:
            state.stack[:] = _State.moved_stack(point.stack, moves.moved)
            state.templates[:] = [moves.moved(t) for t in point.templates]
        settle = _Settle(saved, [i for i in order if resume is None or i > resume], moves, _State)
        start = moves.moved(point.pos) if point is not None else 0
        state = _scan_brackets(new, spec, start, len(new), marks=settle, state=state)
        if settle.settled is None:  # it ran to the end
            for item in state.stack:
                _report_open(state, item)
            return _BalanceScan.made(old.language, problems + state.problems, states, None, None)
        problems += state.problems
        later = saved[settle.settled]
        gap = next(g for g, (first, last) in enumerate(clean) if first <= later.pos <= last)
        resume = len(saved) - 1 if gap == len(clean) - 1 else _last_before(saved, clean[gap][1])
        shift = len(problems) - later.problems
        problems += _moved_problems(old.problems[later.problems : saved[resume].problems], settle)
        states += [settle.moved_state(one, shift, 0) for one in saved[settle.settled : resume + 1]]
        if gap == len(clean) - 1:  # past the last part: the rest is the old scan's, moved
            problems += _moved_problems(old.problems[saved[resume].problems :], settle)
            return _BalanceScan.made(old.language, problems, states, None, None)
        point = saved[resume]  # the next part: resume from the old state before it


def _last_before(saved, limit):
    """Index of the last saved state at or before `limit`, or None."""
    for i in range(len(saved) - 1, -1, -1):
        if saved[i].pos <= limit:
            return i
    return None


def _rescan_markup(old, new, point, tags, states, settle):
    """_rescan() of markup: tags from the saved state on, embedded bodies reused when their text is
    unchanged (`tags` and `states` hold what comes before the resumed state)."""
    language, saved = old.language, old.saved
    stack = [(k, n, p) for k, n, p in point.stack] if point is not None else []
    start = point.pos if point is not None else 0
    found = _scan_markup(new, language, start, len(new), counting=False, marks=settle, stack=stack)
    tags += found.problems
    known = {(lang, body): (pos, problems) for lang, body, pos, problems in old.bodies}
    parts = [(lang, s, e, None, None) for lang, s, e in found.bodies]
    bodies = list(old.bodies[: point.bodies]) if point is not None else []
    bodies += _embedded_problems(new, parts, known)[1]
    if settle.settled is not None:
        later = saved[settle.settled]
        shift, body_shift = len(tags) - later.problems, len(bodies) - later.bodies
        tags += _moved_problems(old.tags[later.problems :], settle)
        for lang, body, pos, found_problems in old.bodies[later.bodies :]:
            bodies.append((lang, body, settle.moved(pos), _moved_problems(found_problems, settle)))
        states = states + [settle.moved_state(one, shift, body_shift) for one in saved[settle.settled :]]
    problems = tags + [p for _lang, _body, _start, found_problems in bodies for p in found_problems]
    return _BalanceScan.made(language, problems, states, tags, bodies)


def _moved_problems(problems, settle):
    return [(settle.moved(pos), symbol, problem) for pos, symbol, problem in problems]


def problems_introduced(old, after, new):
    """new_problems() for an edit, from the scans of the text before (`old`) and after it (`after`,
    of the text `new`): the unmatched entries of `new` (lines and columns in it) it introduced."""
    after = sorted(after.problems, key=lambda p: p[0])
    introduced = _unexplained(old.problems, after, lambda p: (p[1], p[2]))
    return _unmatched_entries(new, introduced) if introduced else []


# --- 6.5 Markup: tags, comments, raw-text bodies; Markdown fences ---------------------------------

_VOID_ELEMENTS = frozenset(
    "area base br col embed hr img input link meta param source track wbr keygen command basefont "
    "frame isindex".split()
)
_OPTIONAL_END = frozenset(
    "li dt dd p rt rp rb rtc optgroup option colgroup caption thead tbody tfoot tr td th html head "
    "body".split()
)
_RAW_TEXT = frozenset(("script", "style", "textarea", "title"))
# Unquoted attribute text cannot hold `<`: a tag never left open runs only to the next `<`.
_ATTRS = r"""[^<>"']*(?:(?:"[^"]*"|'[^']*')[^<>"']*)*"""


def _nested_braces(depth):
    """A pattern for `{...}` holding braces nested `depth` levels deep at most."""
    inner = r"\{[^{}]*\}"
    for _ in range(depth - 1):
        inner = r"\{[^{}]*(?:" + inner + r"[^{}]*)*\}"
    return inner


# (`on:click={() => { if (a) { f() } }}`: Svelte and Vue attributes nest braces)
_ATTRS_WITH_BRACES = r"""[^<>"'{]*(?:(?:"[^"]*"|'[^']*'|""" + _nested_braces(6) + r""")[^<>"'{]*)*"""
_MARKUP_BRANCHES = (
    r"<!--(?:-?>|[\s\S]*?-->)()"  # 1 comment (HTML ends `<!-->` and `<!--->` there)
    r"|<!--()"  # 2 unclosed comment
    r"|<!\[CDATA\[[\s\S]*?\]\]>()"  # 3 CDATA
    r"|<!\[CDATA\[()"  # 4 unclosed CDATA
    r"|<![^>]*>()"  # 5 <!DOCTYPE ...>
    r"|<\?[^>]*>()"  # 6 <?xml ... ?>
    r"|</([A-Za-z][\w:.\-]*)\s*>()"  # 7 name, 8 close tag
    r"|<([A-Za-z][\w:.\-]*)(%s)>()"  # 9 name, 10 attributes, 11 open tag
)
# the groups of _MARKUP_BRANCHES the scanner reads (the tails' roles: _markup_spec)
_CLOSE_NAME, _OPEN_NAME, _OPEN_ATTRIBUTES = 7, 9, 10


def _markup_spec(attributes):
    """The tokenizer of markup whose attribute text `attributes` matches, as a _Spec (roles only)."""
    spec = _Spec()
    spec.regex = _LazyPattern(_MARKUP_BRANCHES % attributes)
    spec.roles = [None, _SKIP, _HANDLED, _SKIP, _HANDLED, _SKIP, _SKIP, None, _CLOSE, None, None, _OPEN]
    return spec


_MARKUP_TOKENS = _markup_spec(_ATTRS)
_MARKUP_TOKENS_BRACES = _markup_spec(_ATTRS_WITH_BRACES)  # (Vue, Svelte: `{...}` in attributes)
_UNQUOTED_SLASH = _LazyPattern(r"""=\s*[^\s"'=<>`]*/$""")
_SCRIPT_LANG = _LazyPattern(r"""\b(lang|type)\s*=\s*["']?([\w/+.-]+)""", re.I)


class _Markup:
    """What one pass over a markup file found (offsets are absolute)."""

    __slots__ = ("elements", "problems", "counts", "bodies", "opens")

    def __init__(self):
        self.elements = []  # (open start, close end, name) for elements with both tags
        self.problems = []  # (offset, symbol, problem)
        self.counts = {}  # "<name>", "</name>", "<name/>" -> occurrences
        self.bodies = []  # (language or None, start, end) of <script>/<style>/... contents
        self.opens = []  # (open start, name, end: of a void or self-closed one, else None) of every open tag, in order


class _MarkupState:
    """The state of a markup scan where it may be saved: its stack of open elements (key, name,
    open start), what it found so far, and whether a `<` that was no tag came before (decided by
    looking ahead, maybe far: no scan may resume after it)."""

    __slots__ = ("stack", "found", "uncertain")

    def __init__(self, stack, found, uncertain):
        self.stack, self.found, self.uncertain = stack, found, uncertain

    def checkpoint(self, pos):
        """This state saved at `pos` (a _Saved counting tag problems and bodies), or None."""
        if self.uncertain or len(self.stack) > _MAX_SAVED_DEPTH:
            return None
        return _Saved(pos, tuple(self.stack), (), len(self.found.problems), len(self.found.bodies))

    @staticmethod
    def moved_stack(stack, moved):
        return tuple((key, name, moved(start)) for key, name, start in stack)

    def same_as(self, saved, moved):
        return tuple(self.stack) == self.moved_stack(saved.stack, moved)


def _scan_markup(text, language, start, end, stop_after=None, counting=True, marks=None, stack=None):
    """One pass over markup: match tags with a stack, HTML-style recovery (docs/cli.md#balance-func-range-tag-range).

    With `stop_after`, stop at the first element that opened before that offset and closes after
    it: elements close innermost first, so no later element can be a smaller container.
    Without `counting`, tag counts and the list of open tags are not collected (tag_range).
    `marks` and `stack` (a saved stack to resume from) serve the incremental post-edit check as in
    _scan_brackets; a scan that `marks` stops reports nothing for the elements still open."""
    scan = _MarkupScan(text, language, end, counting, [] if stack is None else stack)
    limit = end + 1 if stop_after is None else stop_after
    mark = end + 1 if marks is None else marks.next
    uncertain = False
    # where the previous token ended: a "<" in between was no tag (decided by looking ahead, maybe
    # far: _Marks saves no state after it)
    last = start
    roles, tokens = scan.spec.roles, _Tokens(scan.spec, text, start, end)
    for m in tokens:
        role = roles[m.lastindex]
        if marks is not None and not uncertain and text.find("<", last, m.start()) >= 0:
            uncertain = True
        last = m.end()
        if role is _OPEN:
            if m.start() >= mark:
                mark = marks.hit(_MarkupState(scan.stack, scan.found, uncertain), m.start())
                if mark is None:
                    return scan.found
            resume = scan.open_tag(m)
            if resume is not None:
                last = tokens.resume = resume
        elif role is _CLOSE:
            if scan.close_tag(m) <= limit < m.start():
                break
        elif role is _HANDLED:  # an unclosed comment or CDATA section runs to the end
            scan.found.problems.append(
                (m.start(), "<!--" if m.group().startswith("<!--") else "<![CDATA[", "unclosed")
            )
            break
    return scan.finish()


class _MarkupScan:
    """What one markup pass keeps as it goes (_scan_markup): the elements open, what it found,
    and the tag counts."""

    def __init__(self, text, language, end, counting, stack):
        self.text, self.end, self.counting, self.stack = text, end, counting, stack
        self.html_like = language != "xml"
        self.fold = language == "html"
        self.void = _VOID_ELEMENTS if self.html_like else frozenset()
        self.raw_text = _RAW_TEXT if self.html_like else frozenset()
        self.spec = _MARKUP_TOKENS_BRACES if language in ("vue", "svelte") else _MARKUP_TOKENS
        self.found = _Markup()
        self.opened, self.closed, self.self_closed = {}, {}, {}

    def closes_itself(self, m):
        """Whether the open tag `m` ends with `/>` (in HTML not when the `/` ends an unquoted
        value: `<a href=/docs/>`)."""
        tail, attributes = self.text[m.end() - 2], m.group(_OPEN_ATTRIBUTES).rstrip()
        if tail != "/" and not (tail in " \t\r\n" and attributes.endswith("/")):
            return False
        return not (self.html_like and _UNQUOTED_SLASH.search(attributes))

    def open_tag(self, m):
        """An open tag: pushed, unless it closes itself or is void; a raw-text element is skipped
        whole (returns where the scan resumes)."""
        name = m.group(_OPEN_NAME)
        key = name.lower() if self.fold else name
        if self.closes_itself(m):
            self.self_closed[key] = self.self_closed.get(key, 0) + 1
            return self.seen(m, name, whole=True)
        if self.counting:
            self.opened[key] = self.opened.get(key, 0) + 1
        if key in self.void:
            return self.seen(m, name, whole=True)
        self.seen(m, name)
        if key in self.raw_text:
            return _raw_text_element(self.text, m, name, key, self.fold, self.found, self.closed, self.end)
        self.stack.append((key, name, m.start()))
        return None

    def seen(self, m, name, whole=False):
        """An open tag counted (in `opens`): with its end when it is `whole`, the element itself
        (`<item/>`, `<img>`): a tag target counts those too (`tag:item` 2 is the second <item>)."""
        if self.counting:
            self.found.opens.append((m.start(), name, m.end() if whole else None))

    def close_tag(self, m):
        """A close tag: returns where the element it closes opened (its own end if none)."""
        name = m.group(_CLOSE_NAME)
        key = name.lower() if self.fold else name
        if self.counting:
            self.closed[key] = self.closed.get(key, 0) + 1
        stack = self.stack
        if stack and stack[-1][0] == key:
            open_start = stack.pop()[2]
            self.found.elements.append((open_start, m.end(), name))
            return open_start
        return _markup_close_slow(m, key, name, self.html_like, stack, self.found)

    def finish(self):
        """The elements still open reported (not those whose end tag is optional); the counts."""
        found = self.found
        for key, name, open_start in self.stack:
            if not (self.html_like and key.lower() in _OPTIONAL_END):
                found.problems.append((open_start, f"<{name}>", "unclosed"))
        found.counts = _markup_counts(self.opened, self.closed, self.self_closed)
        return found


def _markup_counts(opened, closed, self_closed):
    counts = {}
    for key, n in opened.items():
        counts[f"<{key}>"] = n
    for key, n in closed.items():
        counts[f"</{key}>"] = n
    for key, n in self_closed.items():
        counts[f"<{key}/>"] = n
    return counts


def _raw_text_element(text, m, name, key, fold, found, closed, end):
    """<script>, <style>, <textarea>, <title>: the body is opaque; returns where to resume."""
    closer = re.compile(r"</" + re.escape(name) + r"\s*>", re.I if fold else 0).search(text, m.end(), end)
    language = _body_language(key.lower(), m.group(_OPEN_ATTRIBUTES))
    if closer is None:
        found.problems.append((m.start(), f"<{name}>", "unclosed"))
        found.bodies.append((language, m.end(), end))
        return end
    closed[key] = closed.get(key, 0) + 1
    found.elements.append((m.start(), closer.end(), name))
    found.bodies.append((language, m.end(), closer.start()))
    return closer.end()


def _markup_close_slow(m, key, name, html_like, stack, found):
    """A close tag that does not close the innermost open element (see _close_slow); returns the
    offset of the element it closes (its own end when it closes nothing)."""
    lowest = max(0, len(stack) - _MAX_RECOVERY_DEPTH)
    for i in range(len(stack) - 1, lowest - 1, -1):
        if stack[i][0] == key:
            for inner_key, inner_name, inner_start in stack[i + 1 :]:
                if not (html_like and inner_key.lower() in _OPTIONAL_END):
                    found.problems.append((inner_start, f"<{inner_name}>", "unclosed"))
            open_start = stack[i][2]
            found.elements.append((open_start, m.end(), stack[i][1]))
            del stack[i:]
            return open_start
    if not (html_like and key.lower() in _VOID_ELEMENTS):  # `<input ...></input>` is harmless
        found.problems.append((m.start(), f"</{name}>", "mismatched" if stack else "unexpected"))
    return m.end()


def _style_language(attributes):
    """A style element's language: CSS, SCSS for lang="scss" or "less"; None (unchecked) for Sass."""
    for m in _SCRIPT_LANG.finditer(attributes):
        if m.group(1).lower() == "lang" and m.group(2).lower() in ("scss", "less", "sass"):
            return "scss" if m.group(2).lower() != "sass" else None
    return "css"


def _body_language(element, attributes):
    """Language of a raw-text element's body, or None when it is not checked (templates, JSON-LD)."""
    if element == "style":
        return _style_language(attributes)
    if element != "script":
        return None
    for m in _SCRIPT_LANG.finditer(attributes):
        value = m.group(2).lower()
        if m.group(1).lower() == "lang":
            return {"ts": "typescript", "tsx": "typescript", "js": "javascript", "jsx": "javascript"}.get(
                value
            )
        if value in ("module", "text/javascript", "application/javascript", "text/babel", "jsx"):
            return "javascript"
        if value in ("application/json", "application/ld+json", "importmap"):
            return "json"
        return None
    return "javascript"


def _markup_balance(text, language, start, end, pairs):
    found = _scan_markup(text, language, start, end)
    problems, counts = list(found.problems), dict(found.counts)
    if pairs is not None:
        for open_start, close_end, name in found.elements:
            close_start = text.rfind("</", open_start, close_end)
            pairs.append((open_start, f"<{name}>", close_start, f"</{name}>"))
    for body_language, body_start, body_end in found.bodies:
        if body_language:
            more, more_counts = _balance_problems(text, body_language, body_start, body_end, pairs)
            problems += more
            _merge_counts(counts, more_counts)
    return problems, counts


_FENCE_OPEN = _LazyPattern(r"^[ \t]{0,3}(`{3,}|~{3,})([^\n]*)\n", re.M)


def _markdown_fences(text, start, end):
    """[(language or None, body start, body end, fence start, closed)] of fenced code blocks."""
    fences, pos = [], start
    while True:
        m = _FENCE_OPEN.search(text, pos, end)
        if m is None:
            return fences
        fence, info = m.group(1), m.group(2)
        if fence[0] == "`" and "`" in info:
            pos = m.end()  # "```foo```" is inline code, not a fence
            continue
        closer = re.compile(rf"^[ \t]{{0,3}}{re.escape(fence)}{re.escape(fence[0])}*[ \t]*\r?$", re.M)
        close = closer.search(text, m.end(), end)
        body_end = close.start() if close else end
        fences.append((_fence_language(info), m.end(), body_end, m.start(), close is not None))
        if close is None:
            return fences
        pos = close.end()


def _markdown_balance(text, start, end, pairs):
    problems, counts = [], {}
    for language, body_start, body_end, fence_start, closed in _markdown_fences(text, start, end):
        if not closed:
            fence = text[fence_start:body_start].strip()[:3]
            problems.append((fence_start + text[fence_start:body_start].index(fence), fence, "unclosed"))
        if language:
            more, more_counts = _balance_problems(text, language, body_start, body_end, pairs)
            problems += more
            _merge_counts(counts, more_counts)
    return problems, counts


def _embedded_regions(text, language, start, end):
    """[(language, start, end)] of code embedded in markup (<script>, <style>) or Markdown fences."""
    if language == "markdown":
        return [(lang, s, e) for lang, s, e, _, _ in _markdown_fences(text, start, end) if lang]
    if language in _MARKUP_LANGUAGES:
        return [(lang, s, e) for lang, s, e in _scan_markup(text, language, start, end).bodies if lang]
    return []


# --- 6.6 Lines ------------------------------------------------------------------------------------


def _line_start(text, line):
    """Offset where 1-based `line` starts, or None when the text has no such line."""
    if not isinstance(line, int) or line < 1:
        return None
    pos = skip_lines(text, 0, line - 1)
    return pos if pos < len(text) else None


def _line_end(text, pos, end):
    """Offset of the newline ending the line at `pos` (or `end`)."""
    newline = text.find("\n", pos, end)
    return end if newline < 0 else newline


def _line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def tag_range(text, language, line, name=None):
    """The innermost element whose open tag starts at or before `line` and whose close tag ends at
    or after it (docs/cli.md#balance-func-range-tag-range): {"start", "end", "tag"} (1-based lines) or None.

    Void and self-closing elements have no range; an element never closed (an HTML `<li>`) has none
    either but does not hide its parents. With `name`, only elements of that tag name count.
    """
    if language not in _MARKUP_LANGUAGES or not isinstance(text, str):
        return None
    line_start = _line_start(text, line)
    if line_start is None:
        return None
    line_end = _line_end(text, line_start, len(text))
    found = _scan_markup(text, language, 0, len(text), line_end if name is None else None, False)
    fold = language == "html"
    wanted = name.lower() if (fold and isinstance(name, str)) else name
    best = None
    for open_start, close_end, tag in reversed(found.elements):  # elements are in closing order
        if close_end <= line_start:
            break
        if open_start <= line_end and (best is None or open_start > best[0]):
            if wanted is None or (tag.lower() if fold else tag) == wanted:
                best = (open_start, close_end, tag)
    if best is None:
        return None
    return {"start": _line_of(text, best[0]), "end": _line_of(text, best[1] - 1), "tag": best[2]}


def find_tag(text, language, name):
    """1-based line where the first element with exactly that tag name opens (HTML: any case)."""
    if language not in _MARKUP_LANGUAGES or not isinstance(text, str) or not isinstance(name, str):
        return None
    elements = _tag_elements(text, language, name)
    return _line_of(text, elements[0][0]) if elements else None


def _tag_elements(string, language, name):
    """(open offset, close end or None) of each element called `name`, in the order its open tags
    stand (HTML: any case); a void or self-closed one ends with its tag, one left open has None."""
    fold = language == "html"
    wanted = name.lower() if fold else name
    scanned = _scan_markup(string, language, 0, len(string))
    ends = {start: end for start, end, _tag in scanned.elements}
    return [
        (start, ends.get(start) if whole is None else whole)
        for start, tag, whole in scanned.opens
        if (tag.lower() if fold else tag) == wanted
    ]


def tag_names(text, language):
    """Names of the elements present (first appearance order, HTML names lower-cased)."""
    if language not in _MARKUP_LANGUAGES or not isinstance(text, str):
        return []
    fold = language == "html"
    names = {}
    for _, tag, _whole in _scan_markup(text, language, 0, len(text)).opens:
        names.setdefault(tag.lower() if fold else tag, None)
    return list(names)


# --- 6.7 Function ranges: brace languages ---------------------------------------------------------
# A block is a `{ }` pair found by the braces-only tokenizer. Its header is the code between the
# previous brace token and its `{`, read line by line on a copy where strings and comments are
# blanked: the signature line(s), climbing up through open parentheses (multi-line parameters),
# continuation lines, annotations/attributes, then attached comment lines.

_BRACE_LANGUAGES = frozenset(lang for lang, kind in _RANGE_KINDS.items() if kind == "brace")
_INDENT_LANGUAGES = frozenset(lang for lang, kind in _RANGE_KINDS.items() if kind == "indent")
_WIDER = "wider"  # the header starts before the region we looked at
_NON_NEWLINE = _LazyPattern(r"[^\n]")


def _brace_blocks(text, language, start, end, stop_after=None, restart=None):
    """[(open offset, close offset)] of `{ }` blocks in closing order; unclosed ones end at `end`.
    With `restart` (offset, braces open there), the scan starts there; the blocks it closes that
    opened before it have the opening offset -1."""
    spec = _token_spec(language, "{}")
    raw = []
    state = _State(text, spec, start, end, raw)  # (handlers look back as far as `start`)
    if restart is not None:
        state.stack = [(-1, 1)] * restart[1]  # (placeholders of the code of `{`)
    scan_from = start if restart is None else restart[0]
    state = _scan_brackets(text, spec, scan_from, end, raw, stop_after, state=state)
    blocks = [(offset, close) for (offset, code), close in raw if code == 1]
    if state.stack:  # (unclosed: to the last character before `end` that is no white space)
        last = max(len(text[start:end].rstrip()) + start - 1, 0)
        blocks += [(offset, max(last, offset)) for offset, code in state.stack if code == 1]
    return blocks


def _masked_region(text, language, lo, hi):
    """text[lo:hi] with strings and comments blanked (newlines kept), and the comment spans."""
    spec, skipped = _token_spec(language), []
    _scan_brackets(text, spec, lo, hi, skipped=skipped)
    pieces, comments, last = [], [], lo
    for s, e, k in skipped:
        pieces.append(text[last:s])
        if spec.kinds[k] == "code":  # (a name in backticks: `returns user's name`)
            pieces.append(text[s:e])
        elif spec.kinds[k] == "comment" or e - s < 2:
            pieces.append(_NON_NEWLINE.sub(" ", text[s:e]))
        else:  # a string stays visible as `"   "`: `x = '}'` must still end with a value
            pieces.append('"' + _NON_NEWLINE.sub(" ", text[s + 1 : e - 1]) + '"')
        if spec.kinds[k] == "comment":
            comments.append((s, e))
        last = e
    pieces.append(text[last:hi])
    masked = "".join(pieces)
    if language in ("c", "cpp", "csharp"):  # (`#if`, `#pragma` lines between attributes, a signature and `{`)
        directives = [(lo + m.start(), lo + m.end()) for m in _DIRECTIVE_LINE.finditer(masked)]
        if directives:
            masked = _DIRECTIVE_LINE.sub(lambda m: _NON_NEWLINE.sub(" ", m.group()), masked)
            comments = sorted(comments + directives)
    return masked, comments


_DIRECTIVE_LINE = _LazyPattern(r"^[ \t]*#[^\n]*", re.M)
_CONTINUED_BY_END = _LazyPattern(r"(?:=|=>|->|&&|\|\||\+|::|\b(?:extends|implements|throws|where|func))$")
_CONTINUES_START = _LazyPattern(r"(?::|\.|->|=>|&&|\|\||\?|(?:extends|implements|where|throws|with)\b)")
_TYPE_LINE = _LazyPattern(r"[\w\s:<>,*&~\[\]]*[\w>*&\]]")
_BASE_CALL_NEXT = _LazyPattern(
    r"\)[\w\s]*:$|(?:^|[)}]),$"
)  # (`A(X&& o) noexcept:` too; a `,` alone: what follows the `}` of `: a{x},`)


def _continues(previous, current, language):
    """Whether the line `previous` is part of the same signature as `current` below it."""
    if _CONTINUED_BY_END.search(previous) or _CONTINUES_START.match(current):
        return True
    rule = _CONTINUATIONS.get(language)
    return bool(rule and rule(previous, current))


def _type_above(previous, current):
    """`int`, `static std::vector<T>` on the line above a name(...) (C family)."""
    return bool(_TYPE_LINE.fullmatch(previous)) and previous.split()[-1] not in _CONTROL_WORDS


def _clause_above(previous, current):
    """A `where` clause's bounds one a line, supertraits or conformances below `trait P:` (Rust,
    Swift, Kotlin)."""
    return previous.endswith((",", ":"))


def _clause_or_parameters_above(previous, current):
    """As _clause_above, or the parameters on the line below `func f<T: P>` (Swift, Kotlin)."""
    return previous.endswith((",", ":")) or current.startswith("(")


def _initializers_or_type_above(previous, current):
    """A constructor's initializers (`A(int c) :` above `base(c)`, `: a(x),` above `b(x)`, or
    `, b(x)`), else as _type_above (C++, C#)."""
    initializers = bool(_BASE_CALL_NEXT.search(previous)) or current.startswith(",")
    return initializers or _type_above(previous, current)


def _list_above(previous, current):
    return previous.endswith(",")


def _js_type_above(previous, current):
    """A union or intersection type over lines (`| undefined` below `| { a: string }`), or a type
    list (`C` below `extends B,`): TypeScript and JavaScript headers."""
    return current.startswith(("|", "&")) or previous.endswith(",") and bool(_TYPE_NAMES.fullmatch(current))


_TYPE_NAMES = _LazyPattern(r"[A-Za-z_$][\w$.]*(?:<[^{}()]*>)?(?:\s*,\s*[A-Za-z_$][\w$.]*(?:<[^{}()]*>)?)*,?")
_CONTINUATIONS = {
    "javascript": _js_type_above,
    "typescript": _js_type_above,
    "css": _list_above,
    "scss": _list_above,
    "rust": _clause_above,
    "swift": _clause_or_parameters_above,
    "kotlin": _clause_or_parameters_above,
    "cpp": _initializers_or_type_above,
    "csharp": _initializers_or_type_above,
    "c": _type_above,
    "java": _type_above,
    "dart": _type_above,
}


def _conditional_attributes(lines, j):
    """The line of the `#if` when lines[j] is the `#endif` of a Swift conditional that holds only
    attributes (`#if FLAG` / `@available(…)` / `#endif` above a func: they are its), else None."""
    if lines[j].strip() != "#endif":
        return None
    for k in range(j - 1, -1, -1):
        line = lines[k].strip()
        if line.startswith("#if"):
            return k
        if line and not line.startswith(("@", "#else", "#elseif", "//")):
            return None
    return None


def _is_annotation(line, language):
    if line.startswith("@") and language not in ("css", "scss"):
        return True
    if language == "rust" and line.startswith("#["):
        return True
    if language == "csharp" and line.startswith("[") and line.endswith(("]", "(", ",")):
        return True  # (`[Obsolete(` or `[TestCase(1,`: the first line of one over several)
    return language in ("cpp", "c") and line.startswith("template") and line[8:].lstrip()[:1] == "<"


def _header_lines(lines, language, partial_first, originals=None):
    """Index of the first header line (climbing through parentheses, continuations, annotations and
    comment lines between annotations: `originals` are the lines before blanking), or _WIDER when
    the header may reach above the first line (which is `partial_first` when it starts just after a
    brace on the same line), or None when there is no header."""
    i = len(lines) - 1
    while i >= 0 and not lines[i].strip():
        i -= 1  # Allman style: `{` alone on its line
    if i < 0:
        return _WIDER  # no code since the previous brace: `A() : b_{0} {`
    if language == "c":
        i = _kr_declarator(lines, i)
    depth = _paren_excess(lines[i])  # `)` minus `(` over lines[i:]
    while True:
        while depth > 0:  # inside a multi-line parameter list: go up to its `(`
            if i == 0:
                return _js_operand_start(lines, language)
            i -= 1
            depth += _paren_excess(lines[i])
        if i == 0:
            return _js_operand_start(lines, language) if partial_first else i
        closer = _closer_starting(lines[i], language)
        k = _opener_line(lines, i, closer) if closer else i
        if k is None:
            return _WIDER
        if k < i:  # `>(a: T) {` closes type parameters, `} | null {` an object type (TypeScript)
            depth += sum(_paren_excess(line) for line in lines[k:i])
            i = k
            continue
        current = lines[i].strip()
        previous, above = _code_above(lines, i, originals)
        if not previous:  # (a union going on above a `{ ... }` type just before it: that block too)
            union = language in ("javascript", "typescript") and current.startswith(("|", "&"))
            return _WIDER if union and above == 0 and partial_first else i
        if above == i - 1 and _continues(previous, current, language):
            if language in ("javascript", "typescript") and _js_starts_here(current, depth):
                return i
            i -= 1
            depth += _paren_excess(lines[i])
            continue
        found = _annotation_above(lines, above, language)
        if found is None or found is _WIDER:
            return i if found is None else _WIDER
        i, depth = found[0], depth + found[1]


def _code_above(lines, i, originals):
    """(the line of code above line `i`, stripped; its index), past comment lines (blank in `lines`,
    not in `originals`): an annotation above them still belongs to the header."""
    previous, above = lines[i - 1].strip(), i - 1
    while not previous and above > 0 and originals is not None and originals[above].strip():
        above -= 1
        previous = lines[above].strip()
    return previous, above


def _annotation_above(lines, above, language):
    """(the line where the annotation that ends at line `above` starts, the parentheses it opens
    more than it closes) when that line ends one (over lines: `@A(` ... `)`); _WIDER when its `(`
    lies above the region; None when it ends none."""
    excess, j = _paren_excess(lines[above].strip()), above
    while excess > 0 and j > 0:  # the end of a multi-line annotation?
        j -= 1
        excess += _paren_excess(lines[j])
    if excess > 0:
        return _WIDER
    k = _conditional_attributes(lines, j) if language == "swift" else None
    if k is None and not _is_annotation(lines[j].strip(), language):
        return None
    return (j if k is None else k), excess


_ANGLE_LANGUAGES = frozenset(("cpp", "java", "csharp", "rust", "kotlin", "swift"))


def _closer_starting(line, language):
    """`>` when the header line closes type parameters opened on a line above (`>(a: T) {`,
    `typename C>`), `}` when it closes an object type (`} | null {`), else None."""
    if line.lstrip().startswith(">") or (language in _ANGLE_LANGUAGES and _closes_angles(line)):
        return ">"
    if _TYPE_AFTER_BRACE.match(line) or language in ("javascript", "typescript") and line.strip() == "}":
        return "}"  # (`} {`: an object return type ends where the body starts)
    return None


def _closes_angles(line):
    """Whether `line` closes more `<` than it opens: the end of type parameters or arguments that
    started on a line above (`typename C>`, `Less> const&`)."""
    line = line.replace("->", "").replace("=>", "").replace(">=", "").replace("<=", "")
    return line.count(">") > line.count("<")


def _kr_declarator(lines, i):
    """The line of a K&R C function's `name(a, b)` when lines ..i declare its parameters
    (`    char *a;`: zlib's examples, old GNU code); else `i`."""
    k = i
    while k > 0 and _KR_PARAMETER.fullmatch(lines[k].strip()):
        k -= 1
    return k if k < i and lines[k].rstrip().endswith(")") else i


def _paren_excess(line):
    return line.count(")") - line.count("(")


def _opener_line(lines, i, closer):
    """The line that opens the `<` or `{` (by `closer`) that line `i` starts by closing, or None
    when none of the lines does."""
    opener, excess = ("<" if closer == ">" else "{"), 0
    for k in range(i, -1, -1):
        line = lines[k].replace("=>", "").replace("->", "") if closer == ">" else lines[k]
        excess += line.count(closer) - line.count(opener)
        if excess <= 0:
            return k
    return None


# a function expression after an operator on its line: `cond ? function (o) {`, `}) : function () {`,
# `(function (o, v) {`: an operand of a larger expression, whose header starts at that line
_JS_EXPRESSION_FUNCTION = _LazyPattern(r"[?:(,!&|]\s*(?:async\s+)?function\b")
# a function expression that is the first branch of `?:` on its own line: `  ? function getProto(O) {`, or
# an arrow whose `{` follows it (TypeScript's conditional types hold `? (a: A) => R` too)
_JS_BRANCH_FUNCTION = _LazyPattern(
    r"\s*\?\s*\(?\s*(?:async\s+)?(?:function\b|(?:\([^()]*\)|[A-Za-z_$][\w$]*)\s*=>\s*$)"
)


def _js_starts_here(line, depth):
    """Whether a JavaScript header line that continues the line above holds the function's own
    start: a callback inside a call of a method chain opened on it (`depth` < 0: `.add("b", () => {`),
    or the first branch of `?:` (`? function getProto(O) {`). Climbing further put the chain's
    receiver or the previous callback's `})` into the range, and a statement that goes on after
    the function (`: null;`) lost its first lines. Not after a line ending in `=` (`const x =` above
    `createSelector(…, (t) => {`: the statement ends with the call), nor for the last branch (`:`)."""
    stripped = line.lstrip()
    return (depth < 0 and stripped.startswith(".")) or _JS_BRANCH_FUNCTION.match(line) is not None


def _js_operand_start(lines, language):
    """Where the header may reach above its first line: _WIDER, except for a JavaScript function
    expression that is an operand after an earlier sibling (`}) : function (o, v) {`, `: cond ?
    function getProto(O) {`), whose header starts on its own line, never over that sibling."""
    if language in ("javascript", "typescript"):
        depth = 0
        for k in range(len(lines) - 1, -1, -1):
            depth += _paren_excess(lines[k])
            if _js_expression_function(lines[k], depth):
                return k
    return _WIDER


def _js_expression_function(line, depth):
    """Whether `line` (the first of a header whose paren excess over it and the lines below is
    `depth`) holds a function expression whose own parameter list closes before the `{`."""
    m = _JS_EXPRESSION_FUNCTION.search(line)
    return m is not None and depth - _paren_excess(line) + _paren_excess(line[m.end() :]) <= 0


def _block_header(text, language, lo, brace, start, may_widen=True):
    """(range start offset, header code, header offset) of the block whose `{` is at `brace`, or
    None; `lo` is where the code before it begins (just after the previous brace token)."""
    masked, comments = _masked_region(text, language, lo, brace)
    lines = masked.split("\n")
    originals = text[lo:brace].split("\n")
    i = _header_lines(lines, language, lo > start and text[lo - 1] != "\n", originals)
    if i == _WIDER and not may_widen:
        i = 0
    if i is None or i == _WIDER:
        return i
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    shared_first = lo > start and text[lo - 1] != "\n"
    first = _comments_above(lines, originals, offsets, comments, i, lo, shared_first, language)
    first, head = lo + offsets[first], lo + offsets[i]
    if language in _HASH_DIRECTIVES:
        first = _conditionals_whole(text, first, brace)
        head = max(head, first)
    return first, masked[head - lo :], head


def _conditionals_whole(text, first, brace):
    """_unsplit_conditionals of a range starting at `first`; where it cuts, the preprocessor lines
    after the cut go too: the comment that vouched for them was above it."""
    cut = _unsplit_conditionals(text, first, brace)
    return first if cut == first else _past_unvouched_directives(text, cut, brace)


def _unsplit_conditionals(text, first, brace):
    """`first`, or the start of the line after the last conditional directive of text[first:brace]
    that does not pair inside it: a range holds an `#if` ... `#endif` whole or not at all (an
    `#ifdef _WIN32` above a function whose `#else` comes after it is not the function's)."""
    opened, cut = [], first
    for m in _directives(text, first, brace):
        word = m.group(1)
        if word.startswith("if"):
            opened.append(m.end())
        elif word == "endif" and opened:
            opened.pop()
        elif not opened:  # (an `#else`, `#elif` or `#endif` of a conditional opened above)
            cut = m.end()
    if opened:
        cut = max(cut, opened[-1])
    return first if cut == first else min(brace, cut + 1)


def _past_unvouched_directives(text, first, brace):
    """The start of the first line at or after `first` that is no preprocessor line other than a
    conditional: the conditional cut above them was what stood between them and the comment that
    vouched for them (`/* util.h */`, `#ifndef UTIL_H`, `#define UTIL_H` above a function)."""
    while first < brace:
        end = text.find("\n", first, brace)
        line = text[first : end if end >= 0 else brace].lstrip()
        if end < 0 or not line.startswith("#") or _CONDITIONAL_LINE.match(line):
            return first
        first = end + 1
    return first


def _span_at(spans, starts, pos):
    """The index of the span of `spans` (sorted, apart; `starts` their starts) that `pos` is
    strictly inside, or None."""
    import bisect

    i = bisect.bisect_right(starts, pos) - 1
    return i if i >= 0 and spans[i][0] < pos < spans[i][1] else None


def _comments_above(lines, originals, offsets, comments, i, lo, shared_first, language):
    """The first line of the comment lines just above line `i` of a header (its doc comment): never
    inside a block comment, which a blank line may split (`/*`, a blank line, `*/` above a
    function: the comment is taken whole, or not at all when code precedes it on its line). Not a
    shebang, a file's licence, a Rust inner doc comment (`//!`, `/*!`: the module's) or a comment
    that speaks to a tool about the whole file (`/* eslint-disable */`, `// @ts-check`). A run of
    preprocessor lines other than conditionals (C family: `#define`, `#region`) is taken only with
    a doc comment above it (one about the function, above a `#define` it uses); alone, it is the
    file's, and so is `#include` or `#pragma once` whatever stands above. An `#if` ... `#endif` is
    walked over: _unsplit_conditionals keeps it only when whole (around attributes)."""
    where = (lines, originals, offsets, comments, [s for s, _ in comments], lo, shared_first, language)
    first, held = i, None  # (held: the line below a run of preprocessor lines no comment vouched for yet)
    while first > 0 and not lines[first - 1].strip() and originals[first - 1].strip():
        above = originals[first - 1]
        if first - 1 == 0 and shared_first or _not_a_doc_comment(above, language):
            break  # (a comment sharing its line with the code before it, or one of the file's)
        directive = _directive_kind(above, language)
        if directive == "file":
            break
        if directive:  # (a conditional vouches for none)
            held, first = first if held is None and directive == "other" else held, first - 1
            continue
        first, stop = _comment_top(where, first - 1, i)
        if stop:
            break
        held = None
    return first if held is None else held


def _directive_kind(line, language):
    """None for a line that is no preprocessor line (C family); else "file" (`#include`, `#import`,
    `#pragma once`), "conditional" (`#if` ... `#endif`) or "other" (`#define`, `#region`)."""
    line = line.lstrip()
    if language not in _HASH_DIRECTIVES or not line.startswith("#"):
        return None
    return (
        "file"
        if _FILE_DIRECTIVE_LINE.match(line)
        else "conditional"
        if _CONDITIONAL_LINE.match(line)
        else "other"
    )


def _comment_top(where, first, i):
    """(the first line of the comment that line `first` is in, whether the walk of _comments_above
    stops there): a line comment; a block comment, whole; a licence, or a block that is the file's
    (`/*!`), ends the walk below it; one after code on its line, below the block."""
    import bisect

    lines, originals, offsets, comments, starts, lo, shared_first, language = where
    k = _span_at(comments, starts, lo + offsets[first])
    if k is None:
        licence = bool(_LICENCE.search(originals[first]))  # (a file's licence above its first definition)
        return first + licence, licence
    opened, closed = comments[k]
    line = bisect.bisect_right(offsets, opened - lo) - 1
    if lines[line][: opened - lo - offsets[line]].strip() or (line == 0 and shared_first):
        return min(i, bisect.bisect_right(offsets, closed - lo - 1)), True
    if _LICENCE.search("\n".join(originals[line : first + 1])) or _not_a_doc_comment(
        originals[line], language
    ):
        return first + 1, True  # (a licence, or `/*!` ... `*/`: the file's)
    return line, False


_HASH_DIRECTIVES = ("c", "cpp", "csharp")  # (languages whose `#` lines are the preprocessor's)


def _not_a_doc_comment(line, language):
    """Whether a comment line above a definition (the first of a block comment) cannot be its doc
    comment, whatever stands above it (_comments_above)."""
    line = line.lstrip()
    if line.startswith("#!"):
        return True
    if language == "rust" and line.startswith(("//!", "/*!")):
        return True
    pattern = _FILE_DIRECTIVES.get(language)
    return bool(pattern and re.match(pattern, line))


_CONDITIONAL_LINE = _LazyPattern(r"#\s*(?:if|ifdef|ifndef|elif|else|endif)\b")
_FILE_DIRECTIVE_LINE = _LazyPattern(r"#\s*(?:include|import|pragma\s+once)\b")
# Comments that speak to a tool about the whole file, or all below them, by language: not the doc
# comment of the definition they stand above (one about the next line, `eslint-disable-next-line`,
# is). ESLint's are block comments: `// global state` is prose.
_JS_DIRECTIVES = (
    r"/\*\s*(?:eslint-disable(?!-next-line|-line)|eslint-enable|eslint-env\b|globals?\s|istanbul ignore file)"
    r"|(?://|/\*)\s*(?:@ts-(?:no)?check\b|jshint\b|@flow\b)"
)
_FILE_DIRECTIVES = {
    "javascript": _JS_DIRECTIVES,
    "typescript": _JS_DIRECTIVES,
    "swift": r"//\s*swiftlint:(?:disable|enable)(?!:next|:this|:previous)",
    "go": r"//(?:go:build\b|\s*\+build\b)",
    **dict.fromkeys(_HASH_DIRECTIVES, r"(?://|/\*)\s*clang-format (?:off|on)\b"),
}


_LICENCE = _LazyPattern(  # (a licence's own words: not a doc comment that mentions copyright)
    r"(?i)\bcopyright\s+(?:\(c\)|©|[0-9]{4})|\blicen[cs]ed under the\b|SPDX-License-Identifier"
    r"|\ball rights reserved\b|\bpermission is hereby granted\b"
)


class _Crossed(Exception):
    """A _BlockIndex scanned from a restart point was asked about what lies before it."""


class _BlockIndex:
    """Blocks in closing order (as the scanner finds them), with their closes and sorted opens."""

    __slots__ = ("blocks", "closes", "opens", "floor")

    def __init__(self, blocks, floor=None):
        self.blocks = blocks
        self.closes = [c for _, c in blocks]
        self.opens = sorted(o for o, _ in blocks)
        # blocks were scanned from `floor` on: what lies before it is unknown (blocks open there
        # have the opening offset -1), and a question about it raises _Crossed
        self.floor = floor

    def region_start(self, brace, start):
        """Where the code before the `{` at `brace` begins: just after the previous brace token."""
        import bisect

        j = bisect.bisect_left(self.closes, brace)
        k = bisect.bisect_left(self.opens, brace)
        previous = max(self.closes[j - 1] if j else -1, self.opens[k - 1] if k else -1, start - 1)
        if self.floor is not None and previous < self.floor:
            raise _Crossed
        return previous + 1

    def open_of_close(self, close):
        """Opening offset of the block closing at `close`, or None when no block closes there."""
        import bisect

        j = bisect.bisect_left(self.closes, close)
        found = self.blocks[j][0] if j < len(self.closes) and self.closes[j] == close else None
        if self.floor is not None and (close < self.floor or (found is not None and found < self.floor)):
            raise _Crossed
        return found

    def parent_open(self, brace, start):
        """Opening offset of the innermost block around `brace` (or start - 1)."""
        import bisect

        for o, _ in self.blocks[bisect.bisect_right(self.closes, brace) :]:
            if o < brace:
                if self.floor is not None and o < self.floor:
                    raise _Crossed
                return o
        return start - 1


def _header_of(text, language, brace, index, start):
    """Header (see _block_header) of the block opening at `brace`. When the signature holds braces
    of its own (`@Anno({..})`, `f(opts: {a: T}) {`), the region grows back over the previous
    sibling blocks a few times, then to the enclosing block."""
    lo = index.region_start(brace, start)
    for _ in range(8):
        header = _block_header(text, language, lo, brace, start)
        if header != _WIDER:
            return header
        sibling = index.open_of_close(lo - 1)
        if sibling is None:
            break
        if not text[index.region_start(sibling, start) : sibling].strip():  # (a bare block before a
            return _block_header(text, language, lo, brace, start, False)  # bare block: no signature)
        lo = index.region_start(sibling, start)
    else:
        lo = index.parent_open(brace, start) + 1
    return _block_header(text, language, lo, brace, start, False)


_CONTROL_WORDS = frozenset(
    "if else for foreach while do switch try catch finally synchronized using lock fixed unsafe "
    "checked unchecked loop match select defer when guard repeat with unless until elif return "
    "case default".split()
)
_ALONE_CONTROL_WORDS = frozenset("get set init static add remove".split())
_NOT_FUNCTION_NAMES = _CONTROL_WORDS | frozenset(
    "sizeof new delete throw typeof decltype alignof defined assert super this await".split()
)
# C has none of the other languages' statement words (`local int try(char *hex)`: zlib's infcover.c),
# Java none of C#'s, Rust's or Swift's (`A with(int x) {`, `long until(int x) {`, `String delete(...)`)
_C_NOT_FUNCTION_NAMES = frozenset("if else for while do switch return case default sizeof defined".split())
_JAVA_NOT_FUNCTION_NAMES = frozenset(
    "if else for while do switch try catch finally synchronized return case default new throw assert "
    "super this".split()
)
# Java's modifiers that are also statement words: `default int f() {` (an interface's method),
# `synchronized void f() {`; the statements are `default:`, `default ->`, `synchronized (lock) {`
_JAVA_MODIFIER_WORDS = _LazyPattern(r"\s*(?:(?:default|synchronized)\s+(?=[\w@<]))+")
_ATTRIBUTE_CALLS = frozenset("__declspec __attribute__ __attribute alignas _Alignas".split())  # skipped
_FIRST_WORD = _LazyPattern(r"\s*([A-Za-z_$][\w$]*)")
_MODIFIERS = (
    r"(?:@(?!interface\b)[\w.]+(?:\s*\([^()]*(?:\([^()]*\)[^()]*)*\))?\s*|#\[[^\]]*\]\s*|\[[^\]]*\]\s*"
    r"|template\s*<[^{;]*?>\s*|[a-z]\w*(?:\([\w\s:]*\))?\s+)*"
)
_CLASS_HEAD = _LazyPattern(
    r"\s*" + _MODIFIERS + r"(class|struct|@?interface|enum|record|object|protocol|extension|actor|union|"
    r"trait|namespace|mod|module|package)\b(?!\s*\()(?:\s+(?:class|struct)\b)?\s*(?:<[^{]*?>\s*)?"
    # (no `=` but in parentheses: `struct p s = {` is a variable; Swift's `where E == T {`, Kotlin's
    # `class A(val a: Int = 1) : B(x = 2) {` are types)
    r"([A-Za-z_$][\w$.]*(?:::[A-Za-z_]\w*)*(?![\w$.]|::))?"
    r"(?:\s*<(?:[^<>{}]|\{[^{}]*\}|<(?:[^<>{}]|<[^<>{}]*>)*>)*>)?"  # (defaults: `A<T = any>`, `A<T = { a: 1 }>`)
    r"(?:[^=()]|==|\((?:[^()]|\([^()]*\))*\))*$"
)
_RUST_IMPL = _LazyPattern(
    r"\s*" + _MODIFIERS + r"impl\b\s*(?:<[^{]*?>)?\s*([\w:]+)(?:<[^{]*?>)?(?:\s+for\s+([\w:]+))?"
)
_RUST_FN = _LazyPattern(r"\bfn\s+([A-Za-z_]\w*)")
# type parameters, brackets nested twice: `[S ~[]E, E comparable]`, `[P C[P]]`, `[M ~map[K][]V]`
_GO_TYPE_PARAMS = r"(?:\[[^\[\]]*(?:\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\][^\[\]]*)*\])?"
_GO_FUNC = _LazyPattern(r"\bfunc\b\s*(\([^()]*\)\s*)?([A-Za-z_]\w*)?\s*" + _GO_TYPE_PARAMS + r"\s*\(")
_GO_TYPE = _LazyPattern(r"\s*(type\s+)?([A-Za-z_]\w*)" + _GO_TYPE_PARAMS + r"\s+(?:struct|interface)\b")
_GO_TYPE_GROUP = _LazyPattern(r"^([ \t]*)type[ \t]*\(", re.M)
# a receiver may have type arguments, a `?` or parentheses: `fun Deferred<*>.await()`, `fun Job?.p()`,
# `fun <T> (suspend () -> T).x()`
_KOTLIN_FUN = _LazyPattern(
    r"\bfun\b\s*(?:<(?:[^<>]|<[^<>]*>)*>\s*)?(?:(?:\((?:[^()]|\([^()]*\))*\)|[\w.]+(?:<(?:[^<>()]|<[^<>()]*>)*>)?)\??\.)?"
    r"(`[^`\n]+`|[A-Za-z_]\w*)\s*\(|\b(constructor)\s*\("
)
_KOTLIN_COMPANION = _LazyPattern(r"\s*(?:[a-z]\w*\s+)*?companion\s+object\b")
# a name, or an operator's symbols (`static func < (lhs: N, rhs: N)`)
_SWIFT_FUNC = _LazyPattern(r"\bfunc\s+([^\s(<]+|[-+*/%<>=!&|^~?.]+)|\b(init|deinit|subscript)\b")
_JS_FUNCTION = _LazyPattern(r"\bfunction\b\s*\*?\s*([A-Za-z_$][\w$]*)?")
_JS_ASSIGNED = _LazyPattern(  # (the `=` of `sig => {` is an arrow's: `sig` is its parameter, no name)
    r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)|([A-Za-z_$#][\w$]*)\s*(?::|=(?![=>]))\s*(?:async\b)?"
)
_JS_CLASS_EXPRESSION = _LazyPattern(
    r"(?:[=(,:?>]|\breturn)\s*class\b(?!\s*:)\s*(?!(?:extends|implements)\b)([A-Za-z_$][\w$]*)?"
)
_JS_COMPUTED_NAME = _LazyPattern(  # (group 1: the quote of a quoted name, `"~validate"(data) {`)
    r"\s*(?:(?:static|async|get|set|public|private|protected|readonly|override|abstract)\s+)*\*?\s*"
    r"(?:\[|([\"'])[^\"'\n]*\1)"
)
# type parameters, and short ones with parentheses in them: `args<I extends Parameters<(typeof T)["create"]>[0]>(`
# (zod; bounded, so that a long line of `a < (b)` is not read again from each `<`)
_TYPE_ARGS = r"(?:<[^()]{0,500}>|<(?:[^()]|\([^()]{0,80}\)){0,160}>)"
_JS_PARAMS = _LazyPattern(r"\s*(?:" + _TYPE_ARGS + r"\s*)?\(")
_JS_PAREN = _LazyPattern(r"\s*\(")
_TYPE_CONTEXT_ENDS = tuple(":<|&,([")  # (a `{` after one of these opens no function's body)
_TYPE_AFTER_BRACE = _LazyPattern(r"\s*\}\s*(?:[|&>]|\[\])")  # `} | null`, `}[]`, `}>`: an object type ends
_JS_CALL_THEN_BLOCK = _LazyPattern(r"\)[ \t]*\r?\n[ \t]*\r?\n\s*$")
_JS_CALL_START = _LazyPattern(r"\s*[\w$]+\s*(?:" + _TYPE_ARGS + r"\s*)?\(")
_JS_NOT_METHOD_NAMES = frozenset("if for while switch catch with case typeof void await yield super".split())
# `get if() {`: after one of these words any name is a method's, reserved words too
_JS_METHOD_PREFIX = _LazyPattern(
    r"\s*(?:(?:static|async|get|set|public|private|protected|override)\s+)+\*?\s*[\w$]+\s*\("
)
_SHELL_FUNCTION = _LazyPattern(r"\s*(?:function\s+([\w.:-]+)(?:\s*\(\s*\))?|([\w.:-]+)\s*\(\s*\))\s*$")
_PERL_SUB = _LazyPattern(r"\bsub\s+([\w:]+)|^\s*(BEGIN|END|INIT|CHECK|UNITCHECK|AUTOLOAD|DESTROY)\s*$")
_CSS_MIXIN = _LazyPattern(r"\s*@(?:mixin|function)\s+([\w-]+)")
# from a name's start only (a long word or a::b::c... is read once, not from each part)
_CALL_NAME = _LazyPattern(
    r"((?<![\w$])(?<![\w$]::)(?!operator\b)~?[A-Za-z_$][\w$]*(?:\s*::\s*~?(?!operator\b)[A-Za-z_]\w*)*"
    r"|(?<![\w$])operator\s*(?:\(\)|[^\s(]{1,40}))\s*(?:" + _TYPE_ARGS + r"\s*)?\("
)
_FUNCTION_TAIL = _LazyPattern(
    r"\s*(?:(?:[:=-]>?|const\b|noexcept\b|override\b|final\b|volatile\b|mutable\b|constexpr\b|async\b"
    r"|sync\b|throws\b|rethrows\b|where\b|requires\b|&)[\s\S]*|(?:[A-Za-z_][\w\s*,\[\]]*;\s*)+)?"
)
_KR_PARAMETER = _LazyPattern(
    r"(?:register\s+)?[A-Za-z_][\w\s*]*[\s*][\w\[\]]+(?:\s*,\s*\**\s*[\w\[\]]+)*\s*;"
)
_CLASS_KINDS = {"namespace": "namespace", "mod": "namespace", "module": "namespace", "package": "namespace"}


_JS_CONTROL_HEAD = _LazyPattern(
    r"\s*(?:\}\s*)?(?:else\s+)?(?:if|for|while|switch|catch|with)\s*(?:await\s*)?\("
)


def _js_no_definition(header, named_anyhow):
    """Whether a JavaScript block header is surely no definition's: its `{` opens a type (or a
    value: `function f(): {`, `m(): Promise<{`; the body comes after it), or it is a statement's
    block (_js_statement_block) where no method may be named like the statement."""
    return header.rstrip()[-1:] in _TYPE_CONTEXT_ENDS or (not named_anyhow and _js_statement_block(header))


def _js_statement_block(header):
    """Whether a JavaScript block header is a statement's whose condition closes right before the
    `{`, though a function stands in it: `if (keys.every(function (k) {…})) {` (a callback's own
    `{` is inside the condition's parentheses; `if (c) return (p) => {` is the arrow's)."""
    m = _JS_CONTROL_HEAD.match(header)
    close = _matching_paren(header, m.end() - 1) if m else None
    return close is not None and not header[close + 1 :].strip()  # (`if (c) return (p) => {`: no)


def _classify(header, language, original=None, at=None, in_class=False):
    """(kind, name or None, name offset in header) of a block header (strings and comments
    blanked; `original` is the same text unblanked; `at` is (_GoTypeGroups or None, header offset);
    `in_class`: the block is right inside a class's, or is an object's method `catch(...) {`), or
    None when it is no definition.
    kind: "function", "method", "class", "namespace" or "block" (CSS rules)."""
    if language in ("css", "scss"):
        return _css_block(header, original if original is not None else header)
    js = language in ("javascript", "typescript")
    named_anyhow = js and (in_class or _js_method_named_anyhow(header, language))  # (no statement there)
    if js and _js_no_definition(header, named_anyhow):
        return None
    found = _classify_specific(header, language, at) or _class_head(header, language)
    if found is not None:
        return found
    if not named_anyhow and _statement_head(header, language):
        return None
    if js and not named_anyhow and _JS_CALL_THEN_BLOCK.search(header):
        return None  # `f({...})`, a blank line, `{`: a call, then a block of its own
    if js:
        not_names = frozenset() if named_anyhow else _JS_NOT_METHOD_NAMES
        return _js_computed_method(header, in_class) or _c_like_function(header, not_names)
    if language == "csharp":
        return _csharp_member(header)
    return _c_family_function(header, language)


def _c_family_function(header, language):
    """_classify of a C, C++, Java or Dart block header that is no type's."""
    if language not in ("c", "cpp", "java", "dart"):
        return None
    if language == "cpp" and _brace_initializer(header):
        return None  # `A(int a) : m_a{` opens a member's initializer; the body comes later
    not_names = {"c": _C_NOT_FUNCTION_NAMES, "java": _JAVA_NOT_FUNCTION_NAMES}.get(language)
    return _c_like_function(header, not_names)


_INITIALIZER_LIST = _LazyPattern(r"\)[\w\s&]*(?<!:):(?!:)")  # `) noexcept :` (not `::`)


def _brace_initializer(header):
    """Whether a C++ block header `A(int a) : m_a(a), m_b` ends in a constructor's initializer
    list with a name: its `{` opens that member's initializer, not the body."""
    end = header.rstrip()[-1:]
    return (end.isalnum() or end in "_>") and bool(_INITIALIZER_LIST.search(header))


def _class_head(header, language):
    """_classify of a type's header: Rust's `impl`, or `class`, `struct`, `interface`... (`object`
    in Kotlin only: C#'s `public object O {` is a property)."""
    m = _RUST_IMPL.match(header) if language == "rust" else None
    if m:  # (`impl T` names T, `impl Tr for T` T too: the last group that matched)
        return "class", m.group(m.lastindex), m.start(m.lastindex)
    m = _CLASS_HEAD.match(header)
    word, name = m.groups() if m else (None, None)
    if word == "object" and language != "kotlin":
        return None
    if word == "object" and not name and _KOTLIN_COMPANION.match(header):
        return "class", "Companion", m.start(1)  # (Kotlin's name for a companion object without one)
    return (_CLASS_KINDS.get(word, "class"), name, max(m.start(2), 0)) if m else None


def _statement_head(header, language):
    """Whether the header starts a statement's block (`if (x) {`, `else {`, `get {`), not a
    definition's; Java's `default` and `synchronized` before more words are modifiers, and a
    JavaScript method may be named like a keyword (`default(id) {`, `do(action) {`)."""
    modifiers = _JAVA_MODIFIER_WORDS.match(header) if language == "java" else None
    first = _FIRST_WORD.match(header, modifiers.end() if modifiers else 0)
    if not first:
        return False
    word = first.group(1)
    alone = word in _ALONE_CONTROL_WORDS and not header[first.end() :].strip()
    if word not in _CONTROL_WORDS and not alone:
        return False
    js_method = language in ("javascript", "typescript") and word not in _JS_NOT_METHOD_NAMES
    return not (js_method and _JS_PAREN.match(header, first.end()))


_CSHARP_MODIFIERS = _LazyPattern(
    r"\s*(?:(?:public|private|protected|internal|static|async|virtual|override|abstract|sealed|unsafe|"
    r"extern|readonly|partial|new|file)\s+)*"
)
_CSHARP_TUPLE_TYPE = _LazyPattern(r"\((?:[^()]|\([^()]*\))*\)\??\s+")
_CSHARP_INTERFACE_MEMBER = _LazyPattern(
    r"[\w.]+(?:<(?:[^<>()]|<[^<>()]*>)*>)?\??\s+[\w.]+(?:<(?:[^<>()]|<[^<>()]*>)*>)?\.([A-Za-z_]\w*)\s*\("
)


def _csharp_member(header):
    """A C# method after its modifiers: its return type may be a tuple (`public (bool, int)
    TryGet(`), and it may implement an interface's member by name (`IEnumerator
    IEnumerable.GetEnumerator(`, `bool IJsonLineInfo.HasLineInfo(`)."""
    at = _CSHARP_MODIFIERS.match(header).end()
    tuple_type = _CSHARP_TUPLE_TYPE.match(header, at)
    rest = header[tuple_type.end() :] if tuple_type else header
    found = _c_like_function(rest, None)
    if found is None and not tuple_type:
        m = _CSHARP_INTERFACE_MEMBER.match(header, at)
        close = _matching_paren(header, m.end() - 1) if m else None
        if close is not None and _FUNCTION_TAIL.fullmatch(header, close + 1):
            return "function", m.group(1), m.start(1)
    if found is None or not tuple_type:
        return found
    return found[0], found[1], found[2] + tuple_type.end()


def _js_method_named_anyhow(header, language):
    """Whether `header` is a method whatever its name, reserved words too: after `get`, `set`,
    `static` or `async` (`get enum() {`), or in TypeScript with a return type (`if(c: Code):
    CodeGen {`, ajv's code generator): no statement has either."""
    if _JS_METHOD_PREFIX.match(header):
        return True
    m = _JS_CALL_START.match(header) if language == "typescript" else None
    close = _matching_paren(header, m.end() - 1) if m else None
    return close is not None and header[close + 1 :].lstrip().startswith(":")


def _classify_specific(header, language, at=None):
    """Definitions that a keyword announces (`fn`, `func`, `fun`, `function`, `sub`, ...)."""
    m = None
    if language == "rust":
        m = _RUST_FN.search(header)
    elif language == "go":
        m = _GO_FUNC.search(header)
        if m and header[: m.start()].rstrip().endswith("]"):
            return None  # `[]func(*Value) bool{`: a composite literal of functions, not one
        if m:
            method = m.group(1) and m.group(2)
            return ("method" if method else "function"), m.group(2), m.start(2) if m.group(2) else 0
        m = _GO_TYPE.match(header)
        if m and (m.group(1) or (at and at[0] and at[0].holds(at[1]))):
            return "class", m.group(2), m.start(2)
        return None
    elif language == "kotlin":
        m = _KOTLIN_FUN.search(header)
    elif language == "swift":
        m = _SWIFT_FUNC.search(header)
    elif language in ("javascript", "typescript"):
        return _js_function(header)
    elif language == "shell":
        m = _SHELL_FUNCTION.match(header)
    elif language == "perl":
        m = _PERL_SUB.search(header)
    if m is None:
        return None
    group = 1 if m.group(1) else (2 if m.lastindex and m.lastindex >= 2 and m.group(2) else 1)
    return "function", m.group(group), m.start(group)


class _GoTypeGroups:
    """The `type ( ... )` groups of a Go text, found on first use (one pass over the text)."""

    __slots__ = ("text", "start", "end", "groups")

    def __init__(self, text, start, end):
        self.text, self.start, self.end, self.groups = text, start, end, None

    def holds(self, pos):
        """Whether the header at `pos` (`Name struct`, no `type`) is a type of a group, not a struct
        field: it is in a group's body (the lines after `type (` up to the next line indented no
        deeper than it) and indented deeper than the `type (`."""
        import bisect

        if self.groups is None:
            self.groups = self._find()
        i = bisect.bisect_right(self.groups, (pos, float("inf"))) - 1
        if i < 0:
            return False
        body, body_end, level = self.groups[i]
        return pos < body_end and _LEAD.match(self.text, pos).end() - pos > level

    def _find(self):
        text, end, groups = self.text, self.end, []
        for m in _GO_TYPE_GROUP.finditer(text, self.start, end):
            level = len(m.group(1))
            body = _line_end(text, m.end(), end) + 1
            closed = re.compile(rf"^[ \t]{{0,{level}}}[^ \t\r\n]", re.M).search(text, body, end)
            groups.append((body, closed.start() if closed else end, level))
        return groups


def _js_function(header):
    m = _JS_FUNCTION.search(header)
    if m is None and not header.rstrip().endswith("=>"):
        return _js_class_expression(header)
    if m is not None and m.group(1):
        return "function", m.group(1), m.start(1)
    named = _JS_ASSIGNED.search(header, 0, m.start() if m else len(header))
    if named:
        return ("function", *_assigned_name(named))
    return "function", None, 0


def _assigned_name(named):
    """(name, offset) of a _JS_ASSIGNED match: `name =` or `name:`."""
    group = 1 if named.group(1) else 2
    return named.group(group), named.start(group)


def _js_class_expression(header):
    """`x = class Y extends Z {` (named Y, else x); `(Base) => class extends Base {` (no name)."""
    m = _JS_CLASS_EXPRESSION.search(header)
    if m is None:
        return None
    if m.group(1):
        return "class", m.group(1), m.start(1)
    named = _JS_ASSIGNED.search(header, 0, m.start()) if header[m.start() : m.start() + 2] != "=>" else None
    if named and header[m.start()] in "=:":
        return ("class", *_assigned_name(named))
    return "class", None, 0


def _js_computed_method(header, in_class=False):
    """A method with a computed name: `[Symbol.iterator]() {`, `static async *[key](a) {`; right
    inside a class, a quoted one too: `"~validate"(data) {` (zod: its lines were given the whole
    class). Elsewhere a blanked token may be a regular expression (`{ /> (/ (1) {`), not a name."""
    m = _JS_COMPUTED_NAME.match(header)
    if m is None or (m.group(1) and not in_class):
        return None
    close = _matching_paren(header, m.end() - 1) if m.group(1) is None else m.end() - 1
    params = _JS_PARAMS.match(header, close + 1) if close is not None else None
    close = _matching_paren(header, params.end() - 1) if params else None
    if close is None or not _FUNCTION_TAIL.fullmatch(header, close + 1):
        return None
    return "function", None, 0


def _css_block(header, original):
    m = _CSS_MIXIN.match(header)
    if m:
        return "function", m.group(1), m.start(1)
    selector = " ".join(original.split())
    if not selector:
        return None
    return "block", selector[:120], len(header) - len(header.lstrip())


def _c_like_function(header, not_names=None):
    """`[modifiers] [type] name(params) [qualifiers]`: the first identifier followed by `(` at the
    top level names the function; what follows the `)` must look like qualifiers."""
    for m in _CALL_NAME.finditer(header):
        m = _method_after_type_arguments(header, m)
        if m.start() and header[m.start() - 1] in "@.":
            continue  # an annotation's or a call's parentheses
        if _bracket_depth(header, 0, m.start()) != 0:
            continue
        name = m.group(1)
        if name in _ATTRIBUTE_CALLS:
            continue  # `__declspec(dllexport) void f(void *p) {`
        simple = name.split("::")[-1].strip().lstrip("~")
        before = header[: m.start()].split()
        if before and before[-1] == "new":
            return "class", None, 0  # anonymous class: `new Runnable() {`
        if simple in (_NOT_FUNCTION_NAMES if not_names is None else not_names):
            return None
        close = _matching_paren(header, m.end() - 1)
        if close is None or not _FUNCTION_TAIL.fullmatch(header, close + 1):
            return None
        return (
            ("method" if "::" in name or header[: m.start()].endswith("::") else "function"),
            simple,
            m.start(1) + len(name) - len(name.split("::")[-1].strip()),
        )
    return None


_TYPE_THEN_NAME = _LazyPattern(r">\s+([A-Za-z_]\w*)\s*<")


def _method_after_type_arguments(header, m):
    """The _CALL_NAME match `m`, or when it read a return type's arguments and a generic method's
    name as type arguments (C#'s `List<T> Run<T>(`: `List`), the match of that name."""
    split = _TYPE_THEN_NAME.search(header, m.end(1), m.end())
    return m if split is None else _CALL_NAME.match(header, split.start(1)) or m


_BRACKET_CHARS = _LazyPattern(r"[()\[\]]")


def _bracket_depth(code, lo, hi):
    depth = 0
    for m in _BRACKET_CHARS.finditer(code, lo, hi):
        depth += 1 if m.group() in "([" else -1
    return depth


def _matching_paren(code, open_index):
    depth = 0
    for m in _BRACKET_CHARS.finditer(code, open_index):
        depth += 1 if m.group() in "([" else -1
        if depth == 0:
            return m.start()
    return None


def _brace_function_range(text, language, line_start, outer, start, end):
    line_end = _line_end(text, line_start, end)
    for restart in _brace_restarts(text, language, start, end, line_start):
        try:
            return _brace_function_range_from(
                text, language, line_start, line_end, outer, start, end, restart
            )
        except _Crossed:  # a header reached back before the restart point: try an earlier one
            continue
    return _brace_function_range_from(text, language, line_start, line_end, outer, start, end, None)


_RESTART_EVERY = 512  # code pieces per join of the walk that finds where a blocks scan may restart
_RESTARTS_TRIED = 3
_RESTART_FINE = 16  # pieces per join of Python's second walk, from the latest restart to the line
_KEPT_WALKS = []  # while _definition_spans asks about several lines of one text: {key: walk} (_restart_walk)
_KEEP_WALK_AT = 1.5  # texts' lengths the walks to the definitions would cover, past which one is kept


def _kept_walks():
    """The walks kept while _definition_spans asks about several lines of one text, or None."""
    return _KEPT_WALKS[-1] if _KEPT_WALKS else None


def _restart_walk(text, quick, start, end, line_start, every=None, joins_at=None):
    """The quick walk of text[start:end] to the first join after `line_start`, which finds the
    places a blocks scan may restart at; `every`: pieces a join (_RESTART_EVERY). While
    _definition_spans asks about the lines of several definitions of one text, the walk is walked
    whole once, with _RESTART_FINE pieces a join (restart points near every line: a file with few
    strings had one every 30 KB), and kept (`get` defined in 600 classes walked the file 600
    times); any join with nothing open is a restart point, whatever the size of the joins. A whole
    walk that gives up (at a problem after the line) is walked again to the line."""
    every, kept = _RESTART_EVERY if every is None else every, _kept_walks()
    if kept is None:
        return _quick_walk(text, quick, start, end, line_start, every, joins_at)
    fine = min(every, _RESTART_FINE)
    key = (id(text), id(quick), start, end, fine, joins_at)
    if key not in kept:  # (the text and spec are kept with it: their ids stay theirs)
        walked = _quick_walk(text, quick, start, end, None, fine, joins_at)
        kept[key] = (text, quick, walked, [join[0] for join in walked[0]] if walked else None)
    walked, starts = kept[key][2:]
    if walked is None:
        return _quick_walk(text, quick, start, end, line_start, every, joins_at)
    import bisect

    # (the joins a walk stopped at the line has: those that start at or before it)
    return (walked[0][: bisect.bisect_right(starts, line_start)], *walked[1:])


def _brace_restarts(text, language, start, end, line_start):
    """Up to _RESTARTS_TRIED places, latest first, where a blocks scan for the line at `line_start`
    may start instead of at `start` (docs/behaviour.md#balance-speed): (offset, braces open there).
    Each is the start of a join of the quick walk whose depth went down to 0 before the line, so
    every block around the line and after it opens after that point, and the braces open at it are
    placeholders that close before the line. No place when the walk gives up (a stray `}`, an
    unterminated string...)."""
    quick = _quick_spec(language, "{}")
    walked = _restart_walk(text, quick, start, end, line_start) if quick else None
    if walked is None:
        return []
    joins, found = walked[0], []
    for index in range(len(joins) - 2, -1, -1):  # (a join followed by another: its end is known)
        at, open_before, lowest = joins[index]
        if lowest == 0 and at > start and joins[index + 1][0] <= line_start:
            found.append((at, len(open_before)))
            if len(found) == _RESTARTS_TRIED:
                break
    return found


def _brace_function_range_from(text, language, line_start, line_end, outer, start, end, restart):
    """function_range's answer from the blocks scanned from `restart` (offset, braces open there),
    or from `start` when None; raises _Crossed when it needs a block before the restart point."""
    blocks = _brace_blocks(text, language, start, end, line_end, restart)
    index = _BlockIndex(blocks, None if restart is None else restart[0])
    candidates = _blocks_around(text, index, line_start, line_end, restart)
    chain, blocks = _definition_chain(text, language, candidates, index, (start, end), line_end)
    chain = [c for c in chain if c[2] != "class" or c[3]]  # anonymous classes only gave methods
    if chain:
        return chain[0] if outer else _innermost(text, language, index, chain[-1], (line_start, line_end))
    if outer and blocks:
        (first, close), kind, name = blocks[0], "block", None
        return first, close, kind, name
    return None


def _blocks_around(text, index, line_start, line_end, restart):
    """The blocks (brace, close) that hold the lines, and the few that follow (the line may be
    in a later block's signature: `_SIGNATURE_LOOKAHEAD` of several lines, and the blocks of one
    line among them, such as the `= {}` defaults of its parameters), in order of their braces."""
    import bisect

    later = index.blocks[bisect.bisect_left(index.closes, line_start) :]  # closing after the line starts
    if restart is not None and any(o < restart[0] for o, _ in later):
        raise _Crossed  # (cannot happen: the depth went down to 0 before the line)
    candidates = sorted(b for b in later if b[0] <= line_end)
    following, budget = sorted(b for b in later if b[0] > line_end), _SIGNATURE_LOOKAHEAD * _LINE_BLOCKS
    for count, (brace, close) in enumerate(following):
        if budget <= 0:
            return candidates + following[:count]
        budget -= _block_weight(text, brace, close)
    return candidates + following


def _definition_chain(text, language, candidates, index, scanned, line_end):
    """(the definitions among `candidates`, outermost first, as (first, close, kind, name); every
    block that is not a namespace, as (first, close)); a block whose header starts after the
    lines does not hold them. `scanned`: (start, end) of the text scanned."""
    chain, blocks = [], []
    groups = _GoTypeGroups(text, *scanned) if language == "go" else None
    for brace, close in candidates:
        header = _header_of(text, language, brace, index, scanned[0])
        first = header[0] if header else brace
        if first > line_end:
            continue
        found = _classify_in_chain(text, language, brace, header, groups, chain, blocks)
        if found and found[0] == "namespace":
            continue
        blocks.append((first, close))
        if found:
            close = _expression_end(text, language, found, header[1], close, index) if header else close
            chain.append((first, close, _kind_in(chain, found[0]), found[1]))
    return chain, blocks


_EXPRESSION_BODY = _LazyPattern(r"\s*(?::[^={}]*)?=(?![=>])")  # (after the parameters: `): T =`)


def _expression_body(header):
    """Whether the Kotlin function of `header` has an expression body: `fun f(…): T = …`."""
    fun = _KOTLIN_FUN.search(header)
    params = _matching_paren(header, fun.end() - 1) if fun else None
    return params is not None and bool(_EXPRESSION_BODY.match(header, params + 1))


_EXPRESSION_GOES_ON = _LazyPattern(r"[ \t]*(?:\?\.|\.(?!\.)|\?:|&&|\|\|)")  # (a line that continues one)


def _expression_end(text, language, found, header, close, index):
    """Where a Kotlin function `fun f() = items.map { … }` ends, whose block `close`s in its
    expression body: past the lines below that go on with the expression (`.sum()`, `?: 0`) and
    the blocks they open. Any other definition ends at `close`."""
    if not (language == "kotlin" and found[0] == "function" and _expression_body(header)):
        return close
    while True:
        below = text.find("\n", close) + 1 or len(text)
        later = _closes_of_blocks_in(index, close + 1, below)  # (`} else {`)
        if later:
            close = max(later)
        elif below < len(text) and _EXPRESSION_GOES_ON.match(text, below):
            line_end = text.find("\n", below) % (len(text) + 1)  # (-1: the end of the text)
            close = max([line_end - 1, *_closes_of_blocks_in(index, below, line_end)])
        else:
            return close


_CS_MEMBER_TOKEN = _LazyPattern(r"=>|[<>!=]=|[{}();=]")
_DEPTH_STEP = {"(": 1, "{": 1, ")": -1, "}": -1}
_CS_CONSTRAINTS = _LazyPattern(r"\s+where\s+\w+\s*:(?:[^()]|new\s*\(\s*\))*$")  # (`where T : new()`)
_CS_MEMBER_NAME = _LazyPattern(r"([^\W\d]\w*)\s*(?:<[^<>(){};=]*>)?\s*$")


def _expression_members(text, brace, close):
    """[(first, last, name, name offset)] of the C# methods and constructors with an expression
    body (`public Box(int v) => this.v = v;`) right inside the type whose body is
    text[brace + 1:close]: no block holds them. Each runs from its signature (its doc comment
    with it) to its `;`."""
    masked, comments = _masked_region(text, "csharp", brace + 1, close)
    found = []
    for begin, assigned, end in _assigning_statements(masked):
        if masked.startswith("=>", assigned):
            found += _expression_member(text, masked, brace + 1, (begin, assigned, end), comments)
    return found


def _assigning_statements(masked):
    """(start, its first `=` or `=>`, its `;`) of each statement of a C# type body (strings and
    comments blanked) that ends with `;` outside brackets and holds `=` or `=>` there."""
    depth, begin, assigned = 0, 0, None
    for m in _CS_MEMBER_TOKEN.finditer(masked):
        token = m.group()
        depth = max(depth + _DEPTH_STEP.get(token, 0), 0)
        if depth:
            continue
        if token == "}" and assigned is None:
            begin = m.end()  # (a block member ended)
        elif token == ";":
            if assigned is not None:
                yield begin, assigned, m.start()
            begin, assigned = m.end(), None
        elif assigned is None and token in ("=", "=>"):
            assigned = m.start()


def _expression_member(text, masked, base, spans, comments):
    """[(first, last, name, name offset)] of the statement masked[begin:end] when its code before
    the `=>` at `arrow` ends with a parameter list after a name, else []."""
    begin, arrow, end = spans
    head = _CS_CONSTRAINTS.sub("", masked[begin:arrow].rstrip())
    if not head.endswith(")"):
        return []
    depth, opened = 0, None
    for at in range(len(head) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(head[at], 0)
        if depth == 0:
            opened = at
            break
    named = _CS_MEMBER_NAME.search(head, 0, opened) if opened else None
    if named is None:
        return []
    first = base + begin + len(head) - len(head.lstrip())
    for s, e in reversed(comments):  # (the comments right above it: its doc comment)
        if e <= first and not text[e:first].strip() and text.count("\n", e, first) <= 1:
            first = s
    return [(first, base + end, named.group(1), base + begin + named.start(1))]


def _innermost(text, language, index, found, lines):
    """The innermost definition around the `lines` (start, end offsets): `found`, the innermost
    block's, or in a C# class the member with an expression body that holds them."""
    brace = index.open_of_close(found[1]) if language == "csharp" and found[2] == "class" else None
    if brace is None or brace < 0:
        return found
    for first, last, name, _at in _expression_members(text, brace, found[1]):
        if first <= lines[1] and lines[0] <= last:
            return first, last, "method", name
    return found


def _closes_of_blocks_in(index, lo, hi):
    """Where the blocks whose `{` is in text[lo:hi] close."""
    return [c for o, c in index.blocks if lo <= o < hi]


def _classify_in_chain(text, language, brace, header, groups, chain, blocks):
    """_classify of the block at `brace` whose _block_header is `header` (or None), inside the
    `chain` and `blocks` found around it so far (outermost first)."""
    if not header:
        return None
    in_class = bool(chain) and chain[-1][2] == "class" and blocks[-1] == chain[-1][:2]
    member = in_class or _js_object_catch(text, language, header)
    return _classify(header[1], language, text[header[2] : brace], (groups, header[2]), member)


_JS_CATCH_HEAD = _LazyPattern(r"\s*catch\s*\(")


def _js_object_catch(text, language, header):
    """Whether the block of `header` is an object's method `catch(...) {`: it follows a `,` or the
    object's `{`, where a catch clause follows its try block's `}`."""
    if language not in ("javascript", "typescript") or not _JS_CATCH_HEAD.match(header[1]):
        return False
    return text[max(0, header[2] - 256) : header[2]].rstrip()[-1:] in (",", "{")


def _kind_in(chain, kind):
    """A definition's kind inside the `chain` around it: a function right inside a class is a method."""
    return "method" if kind == "function" and chain and chain[-1][2] == "class" else kind


def _last_part(name):
    """The last part of a qualified name: `Cart.total`, `Cart::total`, `Cart#total` -> `total`."""
    return re.split(r"::|[.#]", name)[-1]


def _with_overloads(text, found, start):
    """`found` (first offset, last offset, kind, name) from the TypeScript overload signatures of
    its name right above it (`function over(a: string): string;`, and their comments): the
    function as the compiler sees it. Without them, a delete by target left signatures that no
    longer had their implementation."""
    first, last, kind, name = found
    if not name or kind not in ("function", "method"):
        return found
    signature = re.compile(_TS_OVERLOAD.replace("NAME", re.escape(_last_part(name))))
    top = pos = first
    while pos > start:
        above = text.rfind("\n", start, pos - 1) + 1
        line = text[above:pos].rstrip("\r\n")
        if signature.fullmatch(line):
            top = pos = above
        elif (
            line.rstrip().endswith("*/") and text.rfind("/*", start, pos) >= 0
        ):  # (kept if a signature is above)
            pos = text.rfind("\n", start, text.rfind("/*", start, pos)) + 1
        elif line.lstrip().startswith("//"):
            pos = above
        else:
            break
    return found if top == first else (pos, last, kind, name)


def _balanced(depth):
    """A pattern of text on one line whose parentheses pair up, nested up to `depth` deep."""
    inner = r"[^()\n]*"
    for _ in range(depth):
        inner = rf"[^()\n]*(?:\({inner}\)[^()\n]*)*"
    return inner


_TS_OVERLOAD = (  # (`function NAME(...)...;`, or `NAME(...): T;` in a class: never a call, `NAME(x);`)
    r"[ \t]*(?:(?:export|default|declare|public|private|protected|static|async|abstract|override)\s+)*"
    r"(?:function\s*\*?\s*NAME\s*(?:<[^\n]*>)?\s*\([^\n]*\)[^\n{;]*"
    r"|NAME\s*(?:<[^\n]*>)?\s*\(" + _balanced(4) + r"\)\s*:[^\n{;]*);[ \t]*(?://[^\n]*)?"
)  # (the parameters balanced, so `main(a) ? ok() : fail();` is a call)


def _range_result(text, found, line_start, line):
    """function_range's answer for `found` (first offset, last offset, kind, name): line numbers
    counted from the line asked about, not from the start of a large text."""
    if found is None:
        return None
    first, last, kind, name = found

    def line_of(pos):
        if pos >= line_start:
            return line + text.count("\n", line_start, pos)
        return line - text.count("\n", pos, line_start)

    result = {"start": line_of(first), "end": line_of(last), "kind": kind}
    if name:
        result["name"] = name
    return result


# --- 6.8 Function ranges: indentation languages (Python) and `end` languages (Ruby, Lua) ----------

_PY_DEF = _LazyPattern(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([^\W\d]\w*)", re.M)
_RUBY_DEF = _LazyPattern(
    r"^([ \t]*)(?:(?:private|protected|public|module_function|[a-z_]\w*(?=[ \t]+def\b))[ \t]+)?"
    r"(def|class|module)(?=[ \t\r\n])[ \t]*"  # (`module? ? a : b` is a call)
    r"(?:(?:[a-z_]\w*|[A-Z][\w:]*)\.)?([\w:]*[\w][?!=]?)?",  # (`def self.make`, `def Cart.make`, `def obj.make`: make)
    re.M,
)
_LUA_DEF = _LazyPattern(
    r"^([ \t]*)(?:local[ \t]+)?(?:(function)[ \t]+([\w.:]+)|([\w.:]+)[ \t]*=[ \t]*(function)\b)", re.M
)
_RUBY_DEF_WORD = _LazyPattern(r"(?:def|class|module)\b")  # (on each line _RUBY_DEF matches; a \b first: 3x)
_LUA_DEF_WORD = _LazyPattern(r"function\b")
_ONE_LINE_END = _LazyPattern(r"\bend\b[ \t]*(?:(?:#|--)[^\n]*)?\r?$")


# Ruby 3's endless method, `def to_s = "pt"`, `def add(o) = x + o`: no `end` closes it (a setter,
# `def x=(v)`, has its `=` on its name, no blank before it, and a body that `end` closes)
def _ruby_endless(text, pos, line_end):
    """Whether the definition at `pos` is an endless method on its one line (not one whose body
    opens a block there, `def rows = data.map do |r|`, which an `end` closes)."""
    return bool(_RUBY_ENDLESS.match(text, pos, line_end)) and not _RUBY_OPENS_BLOCK.search(
        text, pos, line_end
    )


_RUBY_OPENS_BLOCK = _LazyPattern(r"\bdo\b[ \t]*(?:\|[^|\n]*\|)?[ \t]*(?:#[^\n]*)?\r?$")
_RUBY_ENDLESS = _LazyPattern(
    r"[ \t]*(?:[a-z_]\w*[ \t]+(?=def\b))?def[ \t]+(?:\w+\.)?\w+[?!]?"
    r"(?:[ \t]*\([^\n]*\)[ \t]*|[ \t]+)=(?![=~>])"
)
_PY_DEDENT_CACHE = {}
_PY_CONTINUATION = _LazyPattern(r"\\\r?\n")


class _Definition:
    """A definition found by indentation rules: where it is and how to find its extent."""

    __slots__ = ("pos", "indent", "kind", "name", "name_pos")

    def __init__(self, pos, indent, kind, name, name_pos):
        self.pos, self.indent, self.kind, self.name, self.name_pos = pos, indent, kind, name, name_pos


def _python_spans(text, start, end):
    """Sorted (start, end) spans of bracketed code, multi-line strings and backslash continuations:
    a line starting inside one continues the logical line above it."""
    spec = _token_spec("python")
    roles, spans, depth, open_at, commented = spec.roles, [], 0, start, set()
    state, tokens = _State(text, spec, start, end), _Tokens(spec, text, start, end)
    for m in tokens:
        role = roles[m.lastindex]
        token_end = _token_end(state, tokens, m, role)
        if role is _OPEN:
            open_at = m.start() if depth == 0 else open_at
            depth += 1
        elif role is _CLOSE and depth:  # (a stray closer falls through: it is no span)
            depth -= 1
            if depth == 0:
                spans.append((open_at, m.end()))
        elif depth == 0 and text.find("\n", m.start(), token_end) >= 0:
            spans.append((m.start(), token_end))
        elif text[token_end - 1 : token_end] == "\\":
            commented.add(token_end - 1)  # (a comment ending in a backslash continues nothing)
    if depth:
        spans.append((open_at, end))
    return _with_continuations(text, start, end, spans, commented)


def _with_continuations(text, start, end, spans, commented):
    """`spans` and the backslash continuations outside them (`x = \\` above a line at column 0):
    each from its backslash to just past the next line's start."""
    starts, more = None, []
    for m in _PY_CONTINUATION.finditer(text, start, end):  # (one pass; most texts have none)
        starts = [s for s, _ in spans] if starts is None else starts
        if m.start() not in commented and _span_at(spans, starts, m.start()) is None:
            more.append((m.start(), min(end, m.end() + 1)))
    return _merged(spans + more) if more else spans


def _merged(spans):
    """`spans` sorted, those that overlap joined (`x = \\` above a string that opens the next line)."""
    merged = []
    for span in sorted(spans):
        if merged and span[0] < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], span[1]))
        else:
            merged.append(span)
    return merged


def _token_end(state, tokens, m, role):
    """Where the token `m` ends: with its match, or for one that needs a handler (an f-string) where
    the handler read it to (the tokens go on after it)."""
    if role is not _HANDLED:
        return m.end()
    handler, arg = state.spec.handlers[m.lastindex]
    tokens.resume = handler(state, m, arg)
    return tokens.resume or m.end()


def _inside(spans, starts, pos):
    return _span_at(spans, starts, pos) is not None


def _python_definitions(text, start, end, past=None):
    """(definitions, spans, their starts) of text[start:end]; with `past`, the definitions end
    with the first one after that offset (what a function range needs)."""
    spans = _python_spans(text, start, end)
    starts = [s for s, _ in spans]
    defs = []
    for m in _PY_DEF.finditer(text, start, end):
        if not _inside(spans, starts, m.start()):
            kind = "class" if m.group(2) == "class" else "function"
            defs.append(_Definition(m.start(), len(m.group(1)), kind, m.group(3), m.start(3)))
            if past is not None and m.start() > past:
                break
    return defs, spans, starts


def _python_extent(text, definition, spans, starts, start, end):
    """(first offset incl. decorators, offset of the last line, whether a line before `end` ended
    it) of a def/class block; when none did, its end is that of text[start:end]."""
    indent = definition.indent
    dedent = _PY_DEDENT_CACHE.get(indent)
    if dedent is None:
        dedent = _PY_DEDENT_CACHE[indent] = re.compile(r"^[ \t]{0," + str(indent) + r"}(?=[^ \t\r\n#])", re.M)
    pos, stop = _line_end(text, definition.pos, end) + 1, end
    while pos < end:
        m = dedent.search(text, pos, end)
        if m is None:
            break
        if not _inside(spans, starts, m.start()):
            stop = m.start()
            break
        pos = _line_end(text, m.start(), end) + 1
    last = _last_block_line(text, definition.pos, indent, stop, spans, starts)
    return _decorated_start(text, definition, spans, starts, start), last, stop < end


def _last_block_line(text, first, indent, stop, spans, starts):
    """Offset of the block's last line before `stop`: trailing blank lines and comments not
    indented deeper than the def do not belong to it."""
    cursor = stop
    while True:
        line_end = cursor - 1 if cursor > first and text[cursor - 1] == "\n" else cursor
        line_start = text.rfind("\n", first, line_end) + 1
        if line_start <= first:
            return text.rfind("\n", 0, first) + 1
        content = text[line_start:line_end]
        stripped = content.strip()
        shallow = len(content) - len(content.lstrip()) <= indent
        if not _inside(spans, starts, line_start) and (not stripped or (stripped[0] == "#" and shallow)):
            cursor = line_start
            continue
        return line_start


def _decorated_start(text, definition, spans, starts, start):
    """Start of the def line, moved up over decorators at the same indentation (and comment and
    blank lines between them: `@a`, `# note`, `@b`)."""
    head = max(start, text.rfind("\n", start, definition.pos) + 1)
    cursor = top = head
    while cursor > start:
        line_start = max(start, text.rfind("\n", start, cursor - 1) + 1)
        i = _span_at(spans, starts, line_start)
        if i is not None:
            line_start = max(start, text.rfind("\n", start, spans[i][0]) + 1)
        content = text[line_start : cursor - 1]
        stripped = content.lstrip()
        if stripped.startswith("@") and len(content) - len(stripped) == definition.indent:
            cursor = top = line_start
            continue
        if not stripped or stripped.startswith("#"):
            cursor = line_start  # (kept only if a decorator is above it: Python allows blank lines)
            continue
        break
    return top


def _keyword_definitions(text, language, start, end, spans, past=None):
    """Ruby `def/class/module ... end` and Lua `function ... end` headers, but not in a comment
    (`spans`: _multiline_tokens). One in a string is code that the string holds
    (Ruby's `class_eval <<-RUBY`): its `end` is in that string too (_keyword_extent). With `past`,
    they end with the first one after that offset. Only lines holding the keyword are tried: a
    search of the whole text for a pattern that starts with `^` tries it at every character."""
    if language == "ruby":
        pattern, definition, word = _RUBY_DEF, _ruby_definition, _RUBY_DEF_WORD
    else:
        pattern, definition, word = _LUA_DEF, _lua_definition, _LUA_DEF_WORD
    defs, tried = [], -1
    for w in word.finditer(text, start, end):
        line = max(start, text.rfind("\n", start, w.start()) + 1)
        m = pattern.match(text, line, end) if line > tried else None
        tried = line
        if m and not _in_comment(spans, m.start()):
            defs.append(definition(m))
            if past is not None and m.start() > past:
                break
    return defs


def _ruby_definition(m):
    kind = "function" if m.group(2) == "def" else "class"
    name = m.group(3) or ""
    return _Definition(m.start(), len(m.group(1)), kind, name.split(".")[-1] or None, m.start(3))


def _lua_definition(m):
    group = 3 if m.group(3) else 4
    qualified = m.group(group)
    kind = "method" if ":" in qualified else "function"
    name = re.split(r"[.:]", qualified)[-1]
    return _Definition(m.start(), len(m.group(1)), kind, name, m.end(group) - len(name))


_Multiline = collections.namedtuple("_Multiline", "spans starts comments known_to")


def _multiline_tokens(text, language, start, end, until=None):
    """The strings, heredocs and comments of text[start:end] that hold a newline, in order: their
    (start, end) spans, their starts, whether each is a comment, and the offset before which this
    is all there is (`end`; with `until`, the first token starting at or after it, if any)."""
    spec, skipped = _token_spec(language, ""), []  # (no bracket: the same tokens, 20 % sooner)
    state = _scan_brackets(text, spec, start, end, skipped=skipped, skip_until=until)
    kept = [(s, e, spec.kinds[k] == "comment") for s, e, k in skipped if text.find("\n", s, e) >= 0]
    known_to = end if state.stopped is None else state.stopped
    return _Multiline(
        [(s, e) for s, e, _ in kept], [s for s, _, _ in kept], [c for _, _, c in kept], known_to
    )


def _in_comment(spans, pos):
    i = _span_at(spans.spans, spans.starts, pos)
    return i is not None and spans.comments[i]


def _keyword_extent(text, definition, start, end, spans):
    """(first offset, offset of the last line): the block ends at the first `end` with the same
    indentation that is where the definition is: outside strings and comments, or in its string."""
    line_end = _line_end(text, definition.pos, end)
    first = max(start, text.rfind("\n", start, definition.pos) + 1)
    if _ONE_LINE_END.search(text, definition.pos, line_end):
        return first, first
    if _ruby_endless(text, definition.pos, line_end):
        return first, _endless_last_line(text, (first, line_end), definition.indent, end)
    indent = text[first : first + definition.indent]
    closers = re.compile(r"^" + re.escape(indent) + r"end\b", re.M)
    where = _span_at(spans.spans, spans.starts, definition.pos)
    for closer in closers.finditer(text, line_end, end):
        if _span_at(spans.spans, spans.starts, closer.start()) == where:
            return first, closer.start()
        if where is not None and closer.start() > spans.spans[where][1]:
            break
    return None


def _endless_last_line(text, line, indent, end):
    """The offset of the last line of the endless method on `line` (its (start, end) offsets): that
    line, or, when it stops at its `=` (`def total =`), the lines right below it indented deeper
    than its `def` (the body)."""
    first, pos = line
    if not text[first:pos].rstrip().endswith("="):
        return first
    last = first
    while pos < end:
        stop = _line_end(text, pos + 1, end)
        below = text[pos + 1 : stop].rstrip("\r")
        if not below.strip() or len(below) - len(below.lstrip(" \t")) <= indent:
            break
        last, pos = pos + 1, stop
    return last


_KEYWORD_WINDOW = 1 << 16  # characters before a Ruby or Lua line whose definitions are read first
# characters after the line read first, then next, for the end of its function (Python, Ruby): a
# short function is known from a few lines after it (`get` in 600 classes read 64 KiB 600 times)
_LOOKAHEADS = (1 << 12, 1 << 16)
_CUT = "cut"  # (a part of the text read that ends before the function asked for)


def _no_key(_definition):
    return None


def _indented_chain(defs, line_start, line_end, extent, end_key=_no_key, ruled_out=None):
    """Definitions containing the line, outermost first: [(definition, first offset, last line offset)].
    Nested definitions are more indented, so walking up we only look at shallower ones. With
    `end_key` (Ruby, Lua): definitions with the same key end at the same `end` as a later one with
    it, or before; one on or before the line that ends before it, or never, at an `end` it looked
    for (not on its own line) rules out every earlier one with its key (the keys go into
    `ruled_out`, when given)."""
    chain, shallowest, ruled_out = [], float("inf"), set() if ruled_out is None else ruled_out
    for definition in _chain_candidates(defs, line_end):
        if definition.indent >= shallowest:
            continue
        key = end_key(definition)
        if key in ruled_out:
            continue
        found = extent(definition)
        if _extends_over(found, line_start):
            chain.insert(0, (definition, found[0], found[1]))
            shallowest = definition.indent
            if shallowest == 0:
                break
        elif key is not None and _ends_at_an_end_before(definition, found, line_end):
            ruled_out.add(key)
    return chain


def _extends_over(found, line_start):
    """Whether an extent (first offset, offset of the last line), or None, holds the line."""
    return bool(found) and found[0] <= line_start <= found[1]


def _ends_at_an_end_before(definition, found, line_end):
    """Whether a definition on or before the line that does not hold it ended at an `end` it
    looked for (or found none): not on its own line (`def x; end`)."""
    return definition.pos <= line_end and (found is None or found[1] > found[0])


def _chain_candidates(defs, line_end):
    """The definitions that may hold the line ending at `line_end`: those before it, nearest first,
    after the one just below it (the line may be one of its decorators)."""
    import bisect

    i = bisect.bisect_right([d.pos for d in defs], line_end)
    candidates = list(reversed(defs[:i]))
    if i < len(defs):
        candidates.insert(0, defs[i])
    return candidates


def _keyword_chain(text, language, line_start, line_end, start, end):
    """_indented_chain of a Ruby or Lua line. A definition outside strings and comments ends at the
    first `end` after its line with its indentation, outside strings and comments: an earlier one
    with the same indentation ends at the same `end` or before (its key for _indented_chain). The
    strings and comments are read from a restart point of the quick walk before the line
    (docs/behaviour.md#balance-speed) to _LOOKAHEADS past it when that gives a chain whose outermost
    definition is at indentation 0 (no earlier definition can hold the line then); else from
    `start`, and the definitions of the last 64 KiB before the line, then of 16 times more, until
    the outermost one around the line is at indentation 0 or the part read starts where the text
    does."""
    chain = _keyword_chain_restarted(text, language, (line_start, line_end), start, end)
    if chain is not None:
        return chain
    spans = _multiline_tokens(text, language, start, end)
    size = _KEYWORD_WINDOW
    while True:
        at = (
            max(start, text.rfind("\n", start, line_start - size) + 1) if line_start - start > size else start
        )
        chain = _keyword_chain_from(text, language, (line_start, line_end), (at, end), end, spans)
        if at == start or (chain and chain[0][0].indent == 0):
            return chain
        size *= 16


def _keyword_chain_restarted(text, language, lines, start, end):
    """_keyword_chain's answer from a restart point of the quick walk, or None when none gives one
    that no definition before the point can change: its outermost definition is at indentation 0,
    or every indentation shallower than it that a definition before the point may have is ruled
    out by one after it (_indented_chain), as a line outside any definition usually finds."""
    for at in _walk_restarts(text, language, start, end, lines[0], _RESTART_EVERY):
        ruled_out = set()
        for until in dict.fromkeys((*(min(end, lines[1] + more) for more in _LOOKAHEADS), end)):
            ruled_out.clear()
            chain = _keyword_chain_from(text, language, lines, (at, until), end, ruled_out=ruled_out)
            if chain is not _CUT:
                break
        shallowest = chain[0][0].indent if chain else float("inf")
        if shallowest == 0 or (
            language == "ruby" and not _keys_before(text, start, at, shallowest) - ruled_out
        ):
            return chain
    return None


_RUBY_KEYS = _LazyPattern(r"\n([ \t]*)(?:[a-z_]\w*[ \t]+)?(?:def|class|module)(?=[ \t\r\n])")


def _keys_before(text, start, at, shallowest):
    """The indentations (_keyword_chain_from's `end_key`s) shallower than `shallowest` of the lines
    of text[start:at] that _RUBY_DEF may take for a definition (in a string or comment too)."""
    keys = set(_RUBY_KEYS.findall(text, start, at))
    first = _RUBY_DEF.match(text, start, at)
    if first and (start == 0 or text[start - 1] == "\n"):
        keys.add(first.group(1))
    return {key for key in keys if len(key) < shallowest}


def _keyword_chain_from(text, language, lines, read, end, spans=None, ruled_out=None):
    """The chain of the line `lines` (its start and end) from the definitions after `read`[0];
    without `spans`, the strings and comments are read from there to `read`[1] or on to the first
    token after it: _CUT when a definition on or before the line looked for its `end` past that.
    The indentations that definitions after `read`[0] rule out go into `ruled_out`."""
    (line_start, line_end), (at, until) = lines, read
    spans = _multiline_tokens(text, language, at, end, until) if spans is None else spans
    cut = []

    def end_key(d):
        inside = _span_at(spans.spans, spans.starts, d.pos) is not None
        return None if inside else text[d.pos : d.pos + d.indent]  # (d.pos: the start of its line)

    def extent(d):
        found = _keyword_extent(text, d, at, end, spans)
        if d.pos <= line_end and spans.known_to < end and (found is None or found[1] >= spans.known_to):
            cut.append(d)
        return found

    defs = _keyword_definitions(text, language, at, end, spans, past=line_end)
    chain = _indented_chain(defs, line_start, line_end, extent, end_key, ruled_out)
    return _CUT if cut else chain


def _indented_function_range(text, language, line_start, outer, start, end):
    line_end = _line_end(text, line_start, end)
    if language == "python":
        chain = _python_chain(text, line_start, line_end, start, end)
    else:
        chain = _keyword_chain(text, language, line_start, line_end, start, end)
    if not chain:
        return None
    t = 0 if outer else len(chain) - 1
    definition, first, last = chain[t]
    kind = definition.kind
    if kind == "function" and t > 0 and chain[t - 1][0].kind == "class":
        kind = "method"
    return first, last, kind, definition.name


def _python_chain(text, line_start, line_end, start, end):
    """_indented_chain of a Python line. Its spans and definitions are read from a restart point
    of the quick walk before the line (docs/behaviour.md#balance-speed), to _LOOKAHEADS past
    it, when that is sure to give the answer a read of the whole text gives; else from `start`."""
    for at in [*_python_restarts(text, start, end, line_start), start]:
        for stop in dict.fromkeys((*(min(end, line_end + more) for more in _LOOKAHEADS), end)):
            chain = _python_chain_from(text, (line_start, line_end), (at, stop), (start, end))
            if chain is None:
                break  # (a definition may start before `at`: an earlier restart)
            if chain is not _CUT:
                return chain
    raise AssertionError("the whole text always answers")


def _python_restarts(text, start, end, line_start):
    """Up to _RESTARTS_TRIED offsets before the line, latest first, where no bracket is open and
    no string or comment runs: the starts of joins of the quick walk with nothing open. None at
    all when the walk gives up (a stray closer, an unterminated string...)."""
    found = _walk_restarts(text, "python", start, end, line_start, _RESTART_EVERY)
    # (a second, finer walk from the latest one finds some nearer the line, so less is read; a kept
    # walk is that fine already: _restart_walk)
    if found and _kept_walks() is None:
        found = _walk_restarts(text, "python", found[0], end, line_start, _RESTART_FINE) + found
    return found


def _walk_restarts(text, language, start, end, line_start, every):
    """Up to _RESTARTS_TRIED starts of joins of the quick walk (`every` pieces a join) before the
    line, latest first, where nothing is open; none when the language has no quick walk or it gives up."""
    quick, safe = _quick_spec(language), _RESTART_TOKENS.get(language)
    walked = _restart_walk(text, quick, start, end, line_start, every, safe) if quick else None
    if walked is None:
        return []
    import itertools

    found = (
        at for at, open_before, _lowest in reversed(walked[0]) if not open_before and start < at <= line_start
    )
    return list(itertools.islice(found, _RESTARTS_TRIED))  # (the latest: a kept walk has thousands)


# The first characters of the tokens a scan may restart at, where some tokens mean what the code
# before them decides (Ruby's `/` regex or division, `%w[`, `?x`, `<<~EOS`): a scan that starts at
# one of those lacks that code. Python's tokens (strings, comments) mean the same anywhere.
_RESTART_TOKENS = {"ruby": "\"'#"}


def _python_chain_from(text, lines, read, whole):
    """The chain of the line `lines` (its start and end) from the spans and definitions of the
    part `read` (start, stop) of the text `whole` (start, end); None when that part cannot be
    sure of it: a definition around the line may start before the part (no line at column 0
    between the part's start and the line, or decorators reaching its start); _CUT when a
    definition it looked at does not end before the part does, or no definition after the line
    starts in it."""
    (line_start, line_end), (at, stop) = lines, read
    defs, spans, starts = _python_definitions(text, at, stop, past=line_end)
    ended = {}

    def extent(d):
        first, last, closed = _python_extent(text, d, spans, starts, at, stop)
        ended[d.pos] = closed or stop == whole[1]
        return first, last

    chain = _indented_chain(defs, line_start, line_end, extent)
    if at > whole[0] and not _python_restart_holds(text, chain, spans, starts, at, line_start):
        return None
    if not all(ended.values()):  # (a cut extent may also have lost the blank lines at its end)
        return _CUT
    if stop < whole[1] and not (defs and defs[-1].pos > line_end):
        return _CUT  # (the line may be a decorator of a definition after the part read)
    return chain


def _python_restart_holds(text, chain, spans, starts, at, line_start):
    """Whether every definition around the line starts after `at`: a line at column 0 (code,
    outside brackets and strings) stands between `at` and the line, and the outermost one's
    decorators do not reach `at`."""
    if chain and not _python_top_holds(text, chain[0][1], spans, starts, at):
        return False
    pos = line_start
    while text[pos : pos + 1] in ("", " ", "\t", "\r", "\n", "#") or _inside(spans, starts, pos):
        before = text.rfind("\n", at, pos - 1)  # (the lines that start after `at`)
        if before < 0:
            return False
        pos = before + 1
    return True


def _python_top_holds(text, top, spans, starts, at):
    """Whether the walk up over decorators that gave `top` stopped at a line of its own after `at`
    (a line that is no decorator, comment or part of a bracket or string), not at `at` itself."""
    above = text.rfind("\n", 0, top - 1) + 1 if top > 0 else -1
    if top <= at or above < at or _inside(spans, starts, above):
        return False
    return not text[above:top].lstrip().startswith(("@", "#"))


# --- 6.9 Function ranges: public functions --------------------------------------------------------


def function_range(text, language, line, outer=False):
    """The innermost function/method/class containing `line` (docs/cli.md#balance-func-range-tag-range), or with `outer` the
    outermost one: {"start", "end", "kind", "name"} (1-based lines; "name" only when known), or None.

    kind is "function", "method" (a function directly inside a class/struct/impl/trait body, a Go
    function with a receiver, a C++ `A::f`), "class" (class, struct, interface, enum, trait, impl,
    record, object...) or "block" (a CSS rule; or, with `outer`, a top-level block that is no
    definition). Namespaces/modules are never returned. Brace languages: the range starts at the
    signature (multi-line, Allman, annotations, attached comments). Python: `def`/`class` with its
    decorators, ending at its last non-blank line. Ruby/Lua: from `def`/`function` to the `end` at
    the same indentation. HTML/Vue/Svelte/Markdown: inside <script> or a fenced block, in its language.
    JS/TS arrow functions and function expressions count as functions; closures of other languages
    (Rust `|x| {`, C++ lambdas) do not. C# methods and constructors with an expression body
    (`Box(int v) => this.v = v;`) end at their `;`.
    """
    if not isinstance(text, str) or language not in LANGUAGES:
        return None
    line_start = _line_start(text, line)
    if line_start is None:
        return None
    return _function_range_in(text, language, line, line_start, bool(outer), 0, len(text))


def _function_range_in(text, language, line, line_start, outer, start, end):
    if language in _BRACE_LANGUAGES:
        found = _brace_function_range(text, language, line_start, outer, start, end)
        if found and language == "typescript":
            found = _with_overloads(text, found, start)
        return _range_result(text, found, line_start, line)
    if language in _INDENT_LANGUAGES:
        found = _indented_function_range(text, language, line_start, outer, start, end)
        return _range_result(text, found, line_start, line)
    for sub_language, sub_start, sub_end in _embedded_regions(text, language, start, end):
        if sub_start <= line_start < sub_end:
            return _function_range_in(text, sub_language, line, line_start, outer, sub_start, sub_end)
    return None


def _definitions(text, language, start, end, name=None):
    """[(name, name offset)] of definitions in text order (only those called `name` when given)."""
    found = []
    if language in _BRACE_LANGUAGES:
        index = _BlockIndex(_brace_blocks(text, language, start, end))
        groups = _GoTypeGroups(text, start, end) if language == "go" else None
        for brace in index.opens:
            if (
                name is not None
                and text.find(name, max(start, index.region_start(brace, start) - 2000), brace) < 0
            ):
                continue
            header = _header_of(text, language, brace, index, start)
            member = bool(header) and _js_object_catch(text, language, header)
            kind = _classify(header[1], language, at=(groups, header[2]), in_class=member) if header else None
            if kind and kind[0] in ("function", "method", "class") and kind[1]:
                found.append((kind[1], header[2] + kind[2]))
        if language == "csharp":
            found = sorted(found + _expression_definitions(text, index, start, name))
    elif language in _INDENT_LANGUAGES:
        defs = (
            _python_definitions(text, start, end)[0]
            if language == "python"
            else _keyword_definitions(
                text, language, start, end, _multiline_tokens(text, language, start, end)
            )
        )
        found = [(d.name, d.name_pos) for d in defs if d.name]
    else:
        for sub_language, sub_start, sub_end in _embedded_regions(text, language, start, end):
            found += _definitions(text, sub_language, sub_start, sub_end, name)
    if name is not None:
        found = [item for item in found if item[0] == name]
    return found


def _expression_definitions(text, index, start, name):
    """[(name, name offset)] of the C# expression-bodied methods and constructors in the types of
    `index` (only those called `name` when given)."""
    found = []
    for brace, close in index.blocks:
        if brace < 0 or (name is not None and text.find(name, brace, close) < 0):
            continue
        header = _header_of(text, "csharp", brace, index, start)
        kind = _classify(header[1], "csharp", at=(None, header[2])) if header else None
        if kind and kind[0] == "class":
            found += [(n, at) for _f, _l, n, at in _expression_members(text, brace, close)]
    return found


def find_function(text, language, name):
    """1-based line of the first definition of function/method/class `name`, or None.
    Only definitions count, so a call site never wins over the definition."""
    if not isinstance(text, str) or not isinstance(name, str) or not name or language not in LANGUAGES:
        return None
    found = _definitions(text, language, 0, len(text), name)
    return _line_of(text, min(pos for _, pos in found)) if found else None


def function_names(text, language):
    """Names of the functions, methods and classes defined (first appearance order, no repeats)."""
    if not isinstance(text, str) or language not in LANGUAGES:
        return []
    names = {}
    for name, _ in sorted(_definitions(text, language, 0, len(text)), key=lambda item: item[1]):
        names.setdefault(name, None)
    return list(names)


# ====================================================================================================
# 7. Workspace: paths, the sandbox, locks, atomic writes (docs/behaviour.md#paths-and-the-sandbox, #writing-safely)
# ====================================================================================================


# --- the context: settings, the state directory, the workspace ------------------------------------


def user_cache_base(platform=None):
    """The folder platformdirs.user_cache_dir(CACHE_APP_NAME, appauthor=False) names, found without
    it, so that `python better_edit.py` in a Python without platformdirs shares the state of the
    installed program (docs/chips.md#where-files-live). Its rules as of platformdirs 4.14, which the
    executables ship: Linux and macOS take $XDG_CACHE_HOME when it is an absolute path, else
    ~/.cache or ~/Library/Caches; Windows %LOCALAPPDATA%\\NAME\\Cache. `platform` stands in for
    sys.platform (tests compare every platform on one machine)."""
    platform = platform or sys.platform
    if platform == "win32":
        local = os.environ.get("WIN_PD_OVERRIDE_LOCAL_APPDATA", "").strip() or os.environ.get("LOCALAPPDATA")
        local = local or os.path.join(os.path.expanduser("~"), "AppData", "Local")
        return os.path.join(os.path.normpath(local), CACHE_APP_NAME, "Cache")
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, CACHE_APP_NAME)
    return os.path.join(_home(), "Library/Caches" if platform == "darwin" else ".cache", CACHE_APP_NAME)


def _home():
    """$HOME as platformdirs takes it on POSIX: a relative one counts as unset (the user's
    password entry then)."""
    home = os.environ.get("HOME")
    if home is not None and not home.startswith("/"):
        import pwd

        home = pwd.getpwuid(os.getuid()).pw_dir
    return (home or os.path.expanduser("~")).rstrip("/") or "/"


class Context:
    """Everything a handler may consult: language, root, limits, where the stores live.

    Created once in main() (or by a test); the only mutable state is the server's memory of viewed
    texts and the lazily computed cache paths.
    """

    def __init__(
        self,
        lang="en",
        root=None,
        encoding=None,
        max_chips=DEFAULT_MAX_CHIPS,
        chip_ttl=0,
        max_snapshots=DEFAULT_MAX_SNAPSHOTS,
        persist_snapshots=True,
        cache_dir=None,
        workspace=None,
        mcp=False,
        cwd=None,
        lock_wait=LOCK_WAIT_SECONDS,
    ):
        self.lang = lang
        self.lock_wait = lock_wait  # seconds a call waits for a lock another process holds
        self.cwd = cwd or os.getcwd()
        self.root = os.path.realpath(os.path.join(self.cwd, root)) if root else None
        self.encoding = encoding
        self.max_chips = max_chips
        self.chip_ttl = chip_ttl
        self.max_snapshots = max_snapshots
        self.persist_snapshots = persist_snapshots
        self.persist_failure = None  # why snapshots went to memory during this session, if they did
        self.leaving_events = frozenset()  # events a running rollback undoes (never evicted for it)
        self.mcp = mcp
        self._cache_dir = cache_dir
        self._workspace = workspace
        self._workspace_id = None
        self.views = {}  # viewed_code_id -> rendered text, newest last (server memory, docs/behaviour.md#viewed_code_id)
        self.view_files = {}  # viewed_code_id -> the real path of the file it was read from
        self.view_chars = 0  # (their characters)
        self.memory_snapshots = []  # used when snapshots are not persisted
        self.session = os.urandom(6).hex()  # marks this process's snapshots (a rollback names others')
        self.recovered = []  # warnings of interrupted commits undone, for the next result
        self._scan_memory = None  # scans kept for the next edit (scan_memory())

    def altered(self, **fields):
        """A shallow copy of this context with `fields` set (as copy.copy, without importing it for
        every call that reads the journal folders)."""
        other = object.__new__(Context)
        vars(other).update(vars(self), **fields)
        return other

    def scan_memory(self):
        """Where scans of edited texts are kept for the next edit: the server keeps one in memory,
        the CLI keeps large ones in BASE/scans/ (docs/behaviour.md#the-post-edit-balance-check)."""
        if self._scan_memory is None:
            self._scan_memory = _ScanMemory() if self.mcp else _ScanFiles(self)
        return self._scan_memory

    @property
    def cache_base(self):
        """BASE (docs/chips.md#where-files-live): on POSIX systems user_cache_base(), the rule of
        platformdirs written out, so that every Python and every platformdirs release agree; on
        Windows platformdirs, which asks the system for the known folder."""
        if not self._cache_dir:
            self._cache_dir = user_cache_base()
            if os.name == "nt":
                try:
                    import platformdirs

                    self._cache_dir = platformdirs.user_cache_dir(CACHE_APP_NAME, appauthor=False)
                except ImportError:
                    pass
        return self._cache_dir

    @property
    def workspace_id(self):
        """First 16 hex of SHA-256 of the workspace: BETTER_EDIT_WORKSPACE, git top, or root/cwd (docs/behaviour.md#where-state-lives)."""
        if self._workspace_id is None:
            key = self._workspace or _git_top(self.root or self.cwd) or self.root or self.cwd
            self._workspace_id = _sha256_new(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return self._workspace_id

    def store_dir(self, kind):
        return os.path.join(self.cache_base, kind, self.workspace_id)

    def remember_view(self, token, text, real):
        """Keep the text a view showed, and the real path of the file it showed, for STALE_VIEW's
        diff: the last VIEW_MEMORY views, and of them no more than VIEW_MEMORY_CHARS characters
        (the oldest go first). Full reads of a 16 MB file after each edit grew the server by 18 MB
        a read."""
        self._forget_view(token)
        if len(text) > VIEW_MEMORY_CHARS:
            return
        self.views[token] = text
        self.view_files[token] = real
        self.view_chars += len(text)
        while len(self.views) > VIEW_MEMORY or self.view_chars > VIEW_MEMORY_CHARS:
            self._forget_view(next(iter(self.views)))

    def _forget_view(self, token):
        text = self.views.pop(token, None)
        self.view_files.pop(token, None)
        if text is not None:
            self.view_chars -= len(text)


def _git_top(start):
    """The nearest folder at or above `start` holding .git (no subprocess), or None."""
    path = os.path.realpath(start)
    while True:
        if os.path.exists(os.path.join(path, ".git")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


# --- paths and the sandbox (docs/behaviour.md#paths-and-the-sandbox) ------------------------------


_WINDOWS_DRIVE = _LazyPattern(r"^[A-Za-z]:[\\/]|^\\\\")


_PATH_MAX = 32767 if os.name == "nt" else 4096  # characters: the longest path the system takes


def _path_from_arg(file):
    """The path a `file` argument names (a path, or a file:// URL); refuses what names no file."""
    if not isinstance(file, str) or not file:
        raise ToolError("INVALID_ARGUMENT", "arg_type", name="file", expected_key="type.path", got=repr(file))
    if "\0" in file:
        raise ToolError("SANDBOX", "sandbox_name", file=file, why="NUL byte in path")
    if file.startswith("file://"):
        file = _path_of_url(file)
    try:
        os.fsencode(file)
    except UnicodeError:  # e.g. a lone surrogate that no file name on this system can hold
        raise invalid("path_unencodable", file=display_text(file)) from None
    if len(file) > 1 and file.endswith("/"):  # ("new/" made a file "new"; the slash names a folder)
        raise invalid("path_names_folder", file=_clip(file))
    if len(file) > _PATH_MAX:
        raise invalid("path_too_long", file=_clip(display_text(file)), length=len(file), max=_PATH_MAX)
    return file


def _path_of_url(url):
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ToolError("SANDBOX", "sandbox_name", file=url, why="file:// URL with a remote host")
    path = unquote(parts.path, errors="surrogateescape")
    if "\0" in path or not path:
        raise ToolError("SANDBOX", "sandbox_name", file=path, why="NUL byte or empty path in URL")
    return path


def _full_path(ctx, file):
    """The absolute (not yet resolved) path that `file` names (docs/behaviour.md#paths-and-the-sandbox)."""
    path = _path_from_arg(file)
    if ctx.root and os.name != "nt" and ("\\" in path or _WINDOWS_DRIVE.match(path)):
        parts = re.split(r"[\\/]", path)
        if ".." in parts or _WINDOWS_DRIVE.match(path):
            raise ToolError("SANDBOX", "sandbox", file=file, path=path, root=ctx.root)
    base = ctx.root or ctx.cwd
    return os.path.join(base, path if ctx.root else os.path.expanduser(path))


def is_inside(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _use_dir_fd():
    return not PORTABLE_FALLBACKS and os.name != "nt" and os.open in getattr(os, "supports_dir_fd", ())


_MAX_SYMLINKS = 40
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def locate(ctx, file):
    """Where `file` lives: a Place whose folder was reached by one walk (docs/behaviour.md#paths-and-the-sandbox).

    POSIX: from a descriptor of "/" each folder is opened relative to the previous one with
    O_NOFOLLOW; a symlink met on the way is read (readlinkat) and its target walked the same way;
    ".." pops a folder we opened ourselves. So the folder handle is exactly where the checked path
    leads, and a folder swapped for a symlink after the check cannot redirect any later access,
    which all go through this handle. Folders that do not exist yet are kept as `pending`.
    """
    full = _full_path(ctx, file)
    if not _use_dir_fd():
        return _locate_by_name(ctx, file, full)
    parts = [p for p in full.split(os.sep) if p]
    stack = [(os.open(os.sep, _DIR_FLAGS), "")]  # (fd, name) of each folder from "/"
    links = 0
    linked = False  # (the name given was a symlink this walk followed)
    try:
        while True:
            name = _walk_folders(stack, parts, file)
            if name is None or len(parts) > 1:  # a missing folder: the rest is pending
                break
            target = _readlink_at(stack[-1][0], name)
            if target is None:
                break
            links, linked = links + 1, True
            if links > _MAX_SYMLINKS:
                raise _link_loop(full)
            parts[:] = _splice_link(stack, target, [])
        folder_path = os.sep + os.sep.join(n for _fd, n in stack if n)
        pending, name = ([p for p in parts[:-1] if p not in ("", ".")], parts[-1]) if parts else ([], "")
        if ".." in pending:  # a missing folder cannot have a parent to go back to
            raise ToolError("NOT_FOUND", "not_found", file=file, base=ctx.root or ctx.cwd)
        real = os.path.join(folder_path, *pending, name) if name else folder_path
        if ctx.root and not is_inside(real, ctx.root):
            raise ToolError("SANDBOX", "sandbox", file=file, path=display_text(real), root=ctx.root)
        if not name or name in (".", ".."):
            raise ToolError("INVALID_ARGUMENT", "is_directory", file=file)
        folder = _Folder(folder_path, stack.pop()[0])
    finally:
        for fd, _name in stack:
            os.close(fd)
    return Place(file, folder, name, pending, linked, bool(ctx.root))


# what opening a folder with O_NOFOLLOW | O_DIRECTORY says of a symlink (ELOOP; EMLINK on FreeBSD)
# or of something that is no folder (ENOTDIR): only these mean "look again at what is there"
_NOT_A_FOLDER = ("ELOOP", "EMLINK", "ENOTDIR")


def _walk_folders(stack, parts, file):
    """Open the folders of `parts` one by one (consuming them), following symlinks by hand.

    Stops with parts == [final name] (returned) or, when a folder is missing, with the missing
    folders and the name left in `parts` (the first missing one returned).
    """
    links = 0
    while len(parts) > 1:
        part = parts[0]
        if part in ("", "."):
            parts.pop(0)
            continue
        if part == "..":
            parts.pop(0)
            if len(stack) > 1:
                os.close(stack.pop()[0])
            continue
        try:
            fd = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=stack[-1][0])
        except FileNotFoundError:
            return part
        except OSError as exc:
            if _errno_name(exc) not in _NOT_A_FOLDER:  # (EMFILE, EACCES...: the system's words)
                raise os_error(exc, os.sep + os.path.join(*[name for _fd, name in stack[1:]], part)) from None
            target = _readlink_at(stack[-1][0], part)
            links += 1
            if target is None:
                kind = _kind_at(stack[-1][0], part)
                if kind == "other" and _errno_name(exc) == "ENOTDIR":
                    raise ToolError(
                        "NOT_FOUND", "not_found_parent", "not_found.hint_path", file=file, part=part
                    ) from None
                if kind not in ("folder", "link"):
                    raise os_error(exc, part) from None
                if links > _MAX_SYMLINKS:  # swapped between a folder and a link all the time
                    raise ToolError("CONFLICT", "conflict", file=file) from None
                continue  # it changed between our two looks (a folder, then a link, or back): again
            if links > _MAX_SYMLINKS:
                raise _link_loop(file) from None
            parts[:] = _splice_link(stack, target, parts[1:])
            continue
        stack.append((fd, part))
        parts.pop(0)
    while parts and parts[-1] in (".", ".."):  # "dir/.." names a folder, not a file
        if parts.pop() == ".." and len(stack) > 1:
            os.close(stack.pop()[0])
    return parts[0] if parts else None


def _kind_at(fd, name):
    """ "folder", "link", "other" or None (gone) for the entry `name` of folder `fd`, links not followed."""
    import stat as stat_module

    try:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except OSError:
        return None
    return "folder" if stat_module.S_ISDIR(mode) else "link" if stat_module.S_ISLNK(mode) else "other"


def _readlink_at(fd, name):
    try:
        return os.readlink(name, dir_fd=fd)
    except OSError:  # not a symlink, or gone
        return None


def _splice_link(stack, target, rest):
    """The parts left to walk after a symlink: an absolute target restarts from "/"."""
    if target.startswith(os.sep):
        while len(stack) > 1:
            os.close(stack.pop()[0])
    return [p for p in target.split(os.sep) if p] + rest


def errno_of(name):
    import errno

    return getattr(errno, name)


def _locate_by_name(ctx, file, full):
    """Windows and the portable test mode: realpath, then a check (no descriptor-relative calls)."""
    try:
        real = os.path.realpath(full)
    except OSError:  # a link changed while it was being resolved
        raise ToolError("CONFLICT", "conflict", file=file) from None
    if ctx.root and not is_inside(real, ctx.root):
        raise ToolError("SANDBOX", "sandbox", file=file, path=display_text(real), root=ctx.root)
    if os.path.isdir(real):
        raise ToolError("INVALID_ARGUMENT", "is_directory", file=file)
    if os.path.islink(real):  # (realpath leaves a link it could not resolve: a loop)
        raise _link_loop(file)
    linked = os.path.islink(full)
    folder, name = os.path.split(real)
    pending = []
    while not os.path.isdir(folder):
        if os.path.lexists(folder):  # a file where a folder should be
            part = os.path.basename(folder)
            raise ToolError("NOT_FOUND", "not_found_parent", "not_found.hint_path", file=file, part=part)
        folder, missing = os.path.split(folder)
        pending.insert(0, missing)
    return Place(file, _Folder(folder, None), name, pending, linked, bool(ctx.root))


def resolve_path(ctx, file):
    """The real absolute path of `file` (docs/behaviour.md#paths-and-the-sandbox); SANDBOX outside the root."""
    with locate(ctx, file) as place:
        return place.real


# --- a located file and its text ------------------------------------------------------------------


def not_found(file, base, real):
    """NOT_FOUND for `file` (at `real`), with the names a slip of the hand would have meant
    (`did_you_mean`: docs/behaviour.md#errors)."""
    near = [os.path.join(os.path.dirname(file), one) for one in _names_like(*os.path.split(real))]
    near = near or _without_diff_prefix(file, base)
    if not near:
        return ToolError("NOT_FOUND", "not_found", file=file, base=base)
    return ToolError(
        "NOT_FOUND", "not_found", "not_found_near.hint", data={"did_you_mean": near},
        file=file, base=base, near=", ".join(_show(one) for one in near[:3]),
    )  # fmt: skip


def _without_diff_prefix(file, base):
    """[`file` without a diff's `a/` or `b/` prefix] when that names a file inside `base`, else []:
    never a place outside, whose being there no error may tell."""
    kept = file[2:] if file[:2] in ("a/", "b/") and not os.path.isabs(file[2:]) else None
    candidate = os.path.realpath(os.path.join(base, kept)) if kept else None
    inside = candidate and is_inside(candidate, os.path.realpath(base)) and os.path.isfile(candidate)
    return [kept] if inside else []


def _names_like(folder, name):
    """The files of `folder` (of its first _NEAR_LOOKS entries) whose names differ from `name` only
    in case, in spaces around it or in the extension: at most 5, sorted."""
    import itertools

    keys = {name.lower(), name.strip().lower(), os.path.splitext(name.strip())[0].lower()}
    found = []
    try:
        with os.scandir(folder) as entries:
            for entry in itertools.islice(entries, _NEAR_LOOKS):
                key = entry.name.lower()
                if (
                    entry.name != name
                    and (key in keys or os.path.splitext(key)[0] in keys)
                    and entry.is_file()
                ):
                    found.append(entry.name)
    except OSError:
        return []  # (no folder to look in: the plain answer)
    return sorted(found)[:5]


_NEAR_LOOKS = 10_000  # folder entries a NOT_FOUND looks at for names like the one asked for


class Place:
    """A file reached by locate(): its folder's handle, its name, folders still to create.

    Every access to the file goes through the folder handle, so it reaches what was checked.
    Use as a context manager (the handle is closed at the end).
    """

    __slots__ = ("file", "folder", "name", "pending", "created", "released", "linked", "confined")

    def __init__(self, file, folder, name, pending=(), linked=False, confined=False):
        self.file, self.folder, self.name, self.pending = file, folder, name, list(pending)
        self.linked = linked  # the name given was a symbolic link, followed to `name`
        self.confined = confined  # reached under a root (a hard link's other names may lie past it)
        self.created = []  # folders made by make_folders(), outermost first
        self.released = False  # its folder handle was closed to bound descriptors (_reopened walks again)

    def release(self):
        self.folder.close()
        self.released = True

    @property
    def real(self):
        return os.path.join(self.folder.path, *self.pending, self.name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.folder.close()

    def lstat(self):
        """os.lstat of the file, or None when absent; a symlink here appeared after locate(). (A
        released place is looked at by its path: only to choose its lock, never to read or write.)"""
        if self.pending:
            return None
        try:
            st = self.folder.lstat(self.name) if not self.released else os.lstat(self.real)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise os_error(exc, self.real) from None
        import stat as stat_module

        if stat_module.S_ISLNK(st.st_mode):
            raise ToolError("SANDBOX", "sandbox_name", file=self.file, why="it became a symlink")
        return st

    def stat(self, ctx):
        """The stat of an existing regular file, or NOT_FOUND / INVALID_ARGUMENT."""
        st = self.lstat()
        if st is None:
            raise not_found(self.file, ctx.root or ctx.cwd, self.real)
        _require_regular(st, self.file)
        return st

    def open(self, flags=os.O_RDONLY):
        """(fd, stat) of the regular file; never blocks (a FIFO is refused, not waited on)."""
        if self.pending:
            raise FileNotFoundError(2, "No such file or directory", self.real)
        fd = self.folder.open(self.name, flags | _NOFOLLOW | _NONBLOCK)
        try:
            st = os.fstat(fd)
            _require_regular(st, self.file)
            if _NONBLOCK:
                os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd, st

    def read(self, encoding=None):
        """(stat, raw bytes): the first 8 KB are checked for binary before the rest is read (docs/behaviour.md#limits)."""
        try:
            fd, st = self.open()
        except FileNotFoundError:
            raise not_found(self.file, self.folder.path, self.real) from None
        except OSError as exc:
            if _errno_name(exc) == "ELOOP":  # swapped for a symlink between check and use
                raise ToolError(
                    "SANDBOX", "sandbox_name", file=self.file, why="it became a symlink"
                ) from None
            raise os_error(exc, self.real) from None
        try:
            with open(fd, "rb", closefd=True) as handle:
                refuse_binary(handle.read(BINARY_SNIFF_BYTES), self.file, encoding)
                handle.seek(0)  # (reading the 8 KB again costs less than joining a large file to them)
                return st, handle.read()
        except MemoryError:
            raise ToolError("TOO_LARGE", "too_large_memory", file=self.file, size=st.st_size) from None
        except OSError as exc:
            raise os_error(exc, self.real) from None

    def make_folders(self, ctx):
        """Create the pending folders inside the root and walk into them (write of a new file)."""
        while self.pending:
            part = self.pending[0]
            try:
                self.folder.mkdir(part)
                self.created.append(os.path.join(self.folder.path, part))
            except FileExistsError:
                pass
            except OSError as exc:
                raise os_error(exc, os.path.join(self.folder.path, part)) from None
            self.folder = self.folder.enter(part, self.file)
            self.pending.pop(0)
        if ctx.root and not is_inside(self.folder.path, ctx.root):  # (by-name mode re-checks here)
            raise ToolError("SANDBOX", "sandbox", file=self.file, path=self.folder.path, root=ctx.root)


def _require_regular(st, file):
    import stat as stat_module

    if stat_module.S_ISDIR(st.st_mode):
        raise ToolError("INVALID_ARGUMENT", "is_directory", file=file)
    if not stat_module.S_ISREG(st.st_mode):
        raise ToolError("INVALID_ARGUMENT", "not_regular", file=file)


def load_text(ctx, place, encoding=None):
    """(stat, raw bytes, Text) of an existing text file."""
    place.stat(ctx)
    st, raw = place.read(encoding or ctx.encoding)
    return st, raw, decode_file(raw, place.file, encoding or ctx.encoding)


def read_text(ctx, file, encoding=None):
    """(real path, Text) of an existing text file, for tools that only read."""
    with locate(ctx, file) as place:
        _st, _raw, text = load_text(ctx, place, encoding)
        return place.real, text


def read_declared(ctx, file, encoding=None):
    """read_text, except that a file that is not UTF-8, when no encoding is named, is read in the
    encoding it declares (declared_encoding); a declared name that is no ASCII-compatible text codec
    is ENCODING."""
    try:
        return read_text(ctx, file, encoding)
    except ToolError as exc:
        if exc.key != "not_utf8" or encoding or ctx.encoding:
            raise
        failure = exc
    with locate(ctx, file) as place:
        _st, raw = place.read()
        name = declared_encoding(raw)
        if name is None:
            raise failure
        try:
            codec = _lookup_codec(name)
        except ToolError:
            codec = None
        if codec is None or codec.startswith(("utf-16", "utf-32")):
            raise ToolError("ENCODING", "encoding_declared", file=file, encoding=name)
        return place.real, decode_file(raw, place.file, codec)


class Opened:
    """One file as a tool sees it: the name given, where it is (Place, None for reads that are
    done with it), its stat and raw bytes when it was read (None: it does not exist yet), and the
    decoded Text."""

    __slots__ = ("file", "real", "place", "st", "raw", "text", "lines", "_norm", "moved")

    def __init__(self, file, real, text, place=None, st=None, raw=None):
        self.file, self.real, self.text = file, real, text
        self.place, self.st, self.raw = place, st, raw
        self.lines = None  # the decoded lines, when a patch needs them
        self.moved = []  # the offsets a patch's earlier hunks of this file were found at
        self._norm = None

    def normalized(self):
        """The decoded text with LF line ends, made once: the `old` items of a be-edit on one
        file share it (500 of them on a 200,000-line file each decoded it again: 5.6 s)."""
        if self._norm is None:
            self._norm = normalize_newlines(self.text.decode())
        return self._norm


def open_text(ctx, place, encoding=None):
    """The Opened record of the existing text file at `place` (read through its folder handle)."""
    st, raw, text = load_text(ctx, place, encoding)
    return Opened(place.file, place.real, text, place, st, raw)


# --- locks ----------------------------------------------------------------------------------------


def _poll_until(attempt, deadline, slow=None):
    """Call `attempt` every 1-2 ms until it succeeds (None) or `deadline` (time.monotonic()) passes
    (the seconds waited). At most 2 ms: a waiter must find the short gaps between another
    process's calls. `slow` is called once, after a second of waiting."""
    import time

    start, pause = time.monotonic(), 0.001
    while not attempt():
        now = time.monotonic()
        if now >= deadline:
            return round(now - start)
        if slow is not None and now - start >= 1:
            slow()
            slow = None
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, 0.002)
    return None


class LockBusy(OSError):
    """A lock another process held for the whole wait (FileLock): its `pid` (or None) and the
    `seconds` waited. An OSError, so a store that turns a failed write into a warning does the
    same here; Locks turns it into CONFLICT naming the file."""

    def __init__(self, pid, seconds):
        text = f"locked by another better-edit-tools process (pid {pid or '?'}) for {seconds} s"
        super().__init__(errno_of("EAGAIN"), text)
        self.pid, self.seconds = pid, seconds


class FileLock:
    """An exclusive lock on one key (docs/behaviour.md#writing-safely); the lock file lives in the
    cache, not beside it. A holder writes its pid after byte 0 (the byte Windows locks), so a call
    that waits can name it. The wait is bounded: past `deadline` (time.monotonic(); default: the
    context's lock_wait seconds from now) __enter__ raises LockBusy."""

    def __init__(self, ctx, key, deadline=None):
        digest = _sha256_new(key.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        self.ctx = ctx
        self.path = os.path.join(ctx.cache_base, "locks", digest + ".lock")
        self.fd = None
        self.deadline = deadline

    def __enter__(self):
        if self.fd is not None:  # (lock_file hands out a lock already held)
            return self
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600)
        except OSError as exc:
            if _out_of_descriptors(exc):  # (no other folder helps)
                raise os_error(exc, self.path) from None
            self.fd = self._fallback_fd()
        try:
            self._wait()
            with _suppress_os():  # (a full disk only leaves the holder unnamed)
                os.lseek(self.fd, 1, os.SEEK_SET)
                os.write(self.fd, b"%10d\n" % os.getpid())
            os.lseek(self.fd, 0, os.SEEK_SET)  # (Windows unlocks at the position it locked)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _try(self):
        """Take the lock if it is free; whether it was."""
        if os.name == "nt" or PORTABLE_FALLBACKS:
            msvcrt = _msvcrt()
            try:
                msvcrt.locking(self.fd, msvcrt.LK_NBLCK, 1)
                return True
            except OSError:
                return False
        import fcntl

        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _wait(self):
        """Take the lock, waiting (_poll_until) until the deadline; the CLI says once, after a
        second, that it waits."""
        if self._try():
            return
        import time

        start = time.monotonic()
        deadline = self.deadline if self.deadline is not None else start + self.ctx.lock_wait
        waiting = tr(self.ctx.lang, "cli.lock_waiting", seconds=round(deadline - start))
        slow = None if self.ctx.mcp else (lambda: sys.stderr.write(f"{PROGRAM}: {waiting}\n"))
        waited = _poll_until(self._try, deadline, slow)
        if waited is not None:
            raise LockBusy(self.holder(), waited)

    def holder(self):
        """The pid the holder of the lock wrote, or None (not yet written, or unreadable)."""
        try:
            os.lseek(self.fd, 1, os.SEEK_SET)
            pid = os.read(self.fd, 11).strip()
            os.lseek(self.fd, 0, os.SEEK_SET)
        except OSError:
            return None
        return int(pid) if pid.isdigit() else None

    def _fallback_fd(self):
        """The cache is unusable (read-only, full): lock in a private folder of the system temp folder.

        The folder's name is predictable, so it must be ours: created 0700, or already there as a
        real folder (not a link) owned by us with mode 0700; anything else is refused.
        """
        import tempfile

        uid = getattr(os, "getuid", lambda: 0)()
        path = self.path
        try:
            folder = os.path.join(tempfile.gettempdir(), f"better-edit-tools-locks-{uid}")
            path = os.path.join(folder, os.path.basename(self.path))
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                pass
            st = os.lstat(folder)
            import stat as stat_module

            if os.name != "nt" and (
                not stat_module.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o077
            ):
                raise ToolError(
                    "PERMISSION",
                    "permission",
                    path=folder,
                    detail_key="perm.lock_folder",
                )
            return os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600)
        except OSError as exc:
            raise os_error(exc, path) from None

    def __exit__(self, *exc):
        if self.fd is not None:
            if os.name == "nt" or PORTABLE_FALLBACKS:
                with _suppress_os():
                    _msvcrt().locking(self.fd, _msvcrt().LK_UNLCK, 1)
            os.close(self.fd)  # closing releases a flock
            self.fd = None


def _msvcrt():
    """Windows' msvcrt; in the portable test mode on POSIX a stand-in with the same locking calls."""
    if os.name == "nt":
        import msvcrt

        return msvcrt
    import fcntl
    import types

    def locking(fd, mode, size):  # msvcrt.locking: LK_NBLCK raises OSError when the lock is taken
        os.lseek(fd, 0, os.SEEK_SET)
        fcntl.lockf(fd, fcntl.LOCK_UN if mode == 0 else fcntl.LOCK_EX | fcntl.LOCK_NB, size)

    return types.SimpleNamespace(locking=locking, LK_UNLCK=0, LK_NBLCK=2)


LOCK_BUCKETS = 64  # lock files (and at most as many descriptors) for every file lock of a cache


class Locks:
    """The file locks one call holds (docs/behaviour.md#writing-safely). A file is locked through
    LOCK_BUCKETS lock files, two of them: the bucket of its inode (a file not yet created: of its
    path), so hard links share a lock, and the bucket of its path, so a call that comes while a
    commit has already renamed new bytes over the name (a new inode) still waits for that commit.
    The lock folder stays bounded however many files are edited, and a call over 500 files holds
    at most LOCK_BUCKETS descriptors for them. Buckets are taken in ascending order (two processes
    never wait on each other in a circle) and each once per call. Once the locks are held the
    files are looked at again, and all are taken anew if one was replaced meanwhile (an atomic
    write by another process gives its name a new inode); then, if a writer died while this call
    waited, its commit is undone first (recover_interrupted), or, when another process's recovery
    is undoing it, this call waits for that, so no call builds on half-done files.
    `recovering`: the locks of that undo itself."""

    def __init__(self, ctx, recovering=False):
        self.ctx, self.held, self.recovering = ctx, {}, recovering
        self.deadline = None  # (of the whole call: set when the first lock is asked for)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def release(self):
        for lock in self.held.values():
            lock.__exit__(None, None, None)
        self.held = {}

    def _take(self, places):
        """Take the buckets of `places` as they are now; whether they are still those files."""
        stats = [place.lstat() for place in places]
        self.release()
        buckets = {place: _lock_buckets(place, st) for place, st in zip(places, stats)}
        for bucket in sorted(set().union(*buckets.values())):
            try:
                self.held[bucket] = FileLock(self.ctx, f"bucket:{bucket}", self.deadline).__enter__()
            except LockBusy as exc:
                file = next(place.file for place in places if bucket in buckets[place])
                raise _lock_busy(file, exc.pid, exc.seconds) from None
        return all(_identity(place.lstat()) == _identity(st) for place, st in zip(places, stats))

    def _still_there(self, places):
        """self, once every folder of `places` is still at its path; else CONFLICT: the edit
        would land in the moved folder, while the result named the path."""
        for place in places:
            if _folder_moved(place):
                self.release()
                raise ToolError("CONFLICT", "folder_moved", file=place.file)
        return self

    def take_all(self, places):
        import time

        self.deadline = time.monotonic() + self.ctx.lock_wait
        recovered = False
        for _ in range(1000):
            if not self._take(places):
                continue
            _Faults.point("locked")
            in_the_way = None if self.recovering else _commit_in_the_way(self.ctx, places, recovered)
            if in_the_way is None:
                return self if self.recovering else self._still_there(places)
            self.release()  # (the undo takes the locks it needs)
            if in_the_way is _DEAD:
                recovered = True
                self.ctx.recovered = self.ctx.recovered + _recovery_said(self.ctx)
            elif in_the_way is _STUCK:  # (never build on the files of a change not yet undone)
                raise _stuck_error(self.ctx.recovered, places[0].file)
            else:
                _wait_for_record(in_the_way, self.deadline, places[0].file)
        self.release()
        raise ToolError("CONFLICT", "conflict", file=places[0].file)


def _folder_moved(place):
    """Whether the folder `place` reaches its file through is no longer where its path leads: moved
    or replaced since it was opened (while a call waited for its lock, a checkout swapped it)."""
    if place.released or place.folder.fd is None:
        return False  # (a released place is walked again by its path: _reopened)
    try:
        return _identity(os.stat(place.folder.path)) != _identity(os.fstat(place.folder.fd))
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:  # (a path longer than the system takes, a folder on the way not searchable)
        return False


def _stuck_error(recovered, file):
    """The IO error of a write to a file of an interrupted change whose undo failed, or whose
    record could not be removed after it (`recovered`: the warnings of the recovery that found it)."""
    failed = [w for w in recovered if w[0] in ("w.recovery_failed", "w.record_stays")]
    if failed and failed[-1][0] == "w.record_stays":
        return ToolError("IO", "record_stuck", file=file, **failed[-1][1])
    return ToolError("IO", "recovery_stuck", file=file, detail=failed[-1][1]["detail"] if failed else "-")


def _lock_busy(file, pid, seconds):
    """The CONFLICT of a call that waited its whole lock_wait for another process (`pid`: None when
    it is not known; a recovery undoing a dead writer's commit holds its record, not its pid)."""
    if pid is None:
        return ToolError("CONFLICT", "lock_busy_unknown", file=file, seconds=seconds, locks=LOCK_BUCKETS)
    fields = {"file": file, "pid": pid, "seconds": seconds, "locks": LOCK_BUCKETS}
    return ToolError("CONFLICT", "lock_busy", data={"pid": pid}, **fields)


def lock_file(ctx, place):
    """The Locks of one file (a context manager)."""
    locks = Locks(ctx)
    try:
        return locks.take_all([place])
    except BaseException:
        locks.release()
        raise


def _lock_buckets(place, st):
    """The buckets of a file: of its inode and of its path (one, for a file not yet created)."""
    keys = {"path:" + place.real}
    if st is not None:
        keys.add(f"inode:{st.st_dev}:{st.st_ino}")
    return {
        int(_sha256_new(key.encode("utf-8", "surrogateescape")).hexdigest()[:8], 16) % LOCK_BUCKETS
        for key in keys
    }


def _identity(st):
    return None if st is None else (st.st_dev, st.st_ino)


# --- checks before a write ------------------------------------------------------------------------


def written_in_place(place, st):
    """Whether the file `st` is of is written into its own inode instead of replaced by a rename:
    it has other names (hard links, which must stay shared), or it is a mount point of its own (a
    file bind-mounted from another file system, as containers mount one: a rename over it fails
    with EBUSY, so such a file could not be edited at all)."""
    if st.st_nlink > 1 or _rename_refused(place, st) or _owned_by_another(st):
        return True
    device = place.folder.device()
    return device is not None and st.st_dev != device and _listed_as_mount(place.real)


def _owned_by_another(st):
    """Whether the file `st` is of belongs to another user and we are not root: a new file that
    replaced it would be ours, and its owner (and group, if we are not in it) locked out of it."""
    euid = os.geteuid() if hasattr(os, "geteuid") else 0
    return euid != 0 and st.st_uid != euid


def _rename_refused(place, st):
    """Whether the system refuses a rename over the file `st` is of: it stands in a sticky folder
    (/tmp) and neither it nor the folder is ours (and we are not root). The rename failed with
    EPERM after the old file's second name was made, which the sticky bit then kept us from
    removing: a stray name, and the file taken for hard-linked from then on."""
    euid = os.geteuid() if hasattr(os, "geteuid") else 0
    if euid == 0 or st.st_uid == euid:
        return False
    folder = place.folder.stat()
    return folder is not None and bool(folder.st_mode & 0o1000) and folder.st_uid != euid


def _listed_as_mount(path):
    """Whether the mount table lists `path` as a mount point (True where there is no table to
    read): a file on another device than its folder is one, unless the file system gives each
    file a device of its own (overlays whose layers lie on several file systems may), and then
    it is replaced as any file is."""
    try:
        with open("/proc/self/mountinfo", "rb") as table:
            lines = table.read().split(b"\n")
    except OSError:
        return True
    target = os.fsencode(path)
    for line in lines:
        fields = line.split(b" ")  # (the fifth is the mount point, with \040 for a space, ...)
        if len(fields) > 4 and re.sub(rb"\\([0-7]{3})", _octal_byte, fields[4]) == target:
            return True
    return False


def _octal_byte(match):
    return bytes([int(match.group(1), 8) & 0xFF])


def check_writable(place, st):
    """PERMISSION unless the file (or, for a new file, its folder) may be written.

    Root passes every access check, so a file or folder with no write bit at all is refused too:
    a read-only file is a user's statement, not an obstacle to work around. Where the permission
    bits allow writing and the system still refuses (chattr +i or +a on Linux), the error says so.
    """
    if st is not None and (not place.folder.access(place.name) or not st.st_mode & 0o222):
        if _bits_allow_writing(st):
            now = place.lstat()  # (moved away just now, and maybe back: not the system refusing)
            if now is None or _identity(now) != _identity(st) or place.folder.access(place.name):
                raise ToolError("CONFLICT", "conflict", file=place.file)
            raise _refused_anyway(place.real)
        raise _read_only(place.real, "permission_read_only.hint")
    if st is None or not written_in_place(place, st):  # (a rename needs the folder)
        _check_folder_writable(place.folder)


def _check_deletable(place, st):
    """PERMISSION unless the file may be removed from its folder: the folder writable, and not
    another user's file in a folder with the sticky bit (its kept name, made first, would stay)."""
    _check_folder_writable(place.folder)
    if _rename_refused(place, st):
        import errno

        raise ToolError(  # (the system's words for a rename it refuses there)
            "PERMISSION",
            "permission",
            "permission_sticky.hint",
            path=place.real,
            detail=os.strerror(errno.EPERM),
        )


def _check_folder_writable(folder):
    st = folder.stat()
    if st is not None and (not folder.access(".") or not st.st_mode & 0o222):
        if _bits_allow_writing(st):
            raise _refused_anyway(folder.path)
        raise _read_only(folder.path, "permission_read_only_folder.hint")


def _read_only(path, hint):
    """PERMISSION for a file or folder without write permission, in the system's words (EACCES:
    root passes the system's check, so we refuse for it); `hint` says which one it is."""
    import errno

    return ToolError("PERMISSION", "permission", hint, path=path, detail=os.strerror(errno.EACCES))


def _refused_anyway(path):
    if _read_only_mount(path):
        detail = "the file system it is on is mounted read-only"
        return ToolError("PERMISSION", "permission", "permission_rofs.hint", path=path, detail=detail)
    detail = "the system refuses writes although the permission bits allow them"
    return ToolError("PERMISSION", "permission", "permission_eperm.hint", path=path, detail=detail)


def _read_only_mount(path):
    """Whether `path` is on a file system mounted read-only (statvfs; False where unknown)."""
    try:
        return bool(os.statvfs(path).f_flag & getattr(os, "ST_RDONLY", 0))
    except (OSError, AttributeError, ValueError):
        return False


def _bits_allow_writing(st):
    """Whether the permission bits alone let this process write the file (root: any write bit)."""
    euid = os.geteuid() if hasattr(os, "geteuid") else None
    if euid is None:
        return False
    return bool(st.st_mode & (0o222 if euid == 0 else 0o200 if st.st_uid == euid else 0))


def file_signature(st):
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def _same_signature(place, st):
    """Whether the file still has the stat signature it was read with (or is still absent): the
    check right before each file's rename, the whole of a many-file commit after its prepare."""
    try:
        now = place.lstat()
    except ToolError:
        return False
    if st is None or now is None:
        return st is None and now is None
    return file_signature(now) == file_signature(st)


def _still_same(place, st, raw):
    """True when the file still holds what was read (stat signature; small files byte by byte)."""
    if not _same_signature(place, st):
        return False
    if st is not None and raw is not None and len(raw) <= 1 << 20:
        try:
            fd, _st = place.open()
        except (OSError, ToolError):
            return False
        with open(fd, "rb", closefd=True) as handle:
            return handle.read(len(raw) + 1) == raw
    return True


# --- writing bytes: payloads, digests, copies, read-back (docs/behaviour.md#writing-safely) -------


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view[: 1 << 24])
        view = view[written:]


# A payload is what a write puts in a file: pieces (source bytes, start, stop, file_offset), where
# file_offset says the same bytes stand at that offset of the file being replaced, so the kernel can
# copy them (copy_file_range) instead of pushing them through this process again.


def payload_of(data):
    """A payload holding `data`: the pieces of bytes to write, (source, start, stop, file offset or None)."""
    return [(data, 0, len(data), None)]


def payload_size(payload):
    return sum(stop - start for _source, start, stop, _offset in payload)


def payload_digest(payload):
    """The _Digest of the bytes `payload` writes (its sources are bytes: they cannot change)."""
    return _Digest([memoryview(source)[start:stop] for source, start, stop, _offset in payload])


def _pieces_sha256(pieces):
    """SHA-256 (hex) of the bytes of `pieces` (buffers) one after the other."""
    digest = _sha256_new(more=sum(len(piece) for piece in pieces))
    for piece in pieces:
        digest.update(piece)
    return digest.hexdigest()


def _fd_sha256(fd):
    """SHA-256 (hex) of the whole file `fd`, read from its start."""
    os.lseek(fd, 0, os.SEEK_SET)
    digest = _sha256_new(more=os.fstat(fd).st_size)
    reader = io.FileIO(fd, "rb", closefd=False)
    for chunk in iter(lambda: reader.read(_READ_BACK_CHUNK), b""):
        digest.update(chunk)
    return digest.hexdigest()


class _Digest:
    """The SHA-256 (hex) of byte `pieces`, computed when first asked for (a call that never asks
    hashes nothing). The pieces must not change until `hexdigest()` has answered."""

    __slots__ = ("_pieces", "_value")

    def __init__(self, pieces):
        self._pieces, self._value = pieces, None

    def hexdigest(self):
        if self._value is None:
            self._value = _pieces_sha256(self._pieces)
            self._pieces = None
        return self._value


def _copy_range(src_fd, dst_fd, offset, count):
    """Bytes copied in the kernel from src_fd[offset:] to dst_fd's position (0 if unsupported)."""
    copy = None if PORTABLE_FALLBACKS else getattr(os, "copy_file_range", None)
    done = 0
    if copy is None or src_fd is None:
        return 0
    with _suppress_os():
        while done < count:
            copied = copy(src_fd, dst_fd, count - done, offset + done)
            if copied <= 0:
                break
            done += copied
    return done


def _write_payload(fd, payload, src_fd=None):
    for source, start, stop, offset in payload:
        done = _copy_range(src_fd, fd, offset, stop - start) if offset is not None else 0
        _write_all(fd, memoryview(source)[start + done : stop])


_READ_BACK_CHUNK = 1 << 18  # bytes read back at a time, into one buffer (fresh memory costs page faults)


def _holds(fd, payload):
    """Read `fd` back from its start and compare it with `payload`, chunk by chunk (docs/behaviour.md#writing-safely)."""
    total = payload_size(payload)
    if os.fstat(fd).st_size != total:
        return False
    os.lseek(fd, 0, os.SEEK_SET)
    buffer = memoryview(bytearray(max(1, min(_READ_BACK_CHUNK, total))))
    reader = io.FileIO(fd, "rb", closefd=False)  # (readinto: os.readv is not on Windows)
    for source, start, stop, _offset in payload:
        fast = isinstance(source, (bytes, bytearray))  # compared in place, without a copy
        view = None if fast else memoryview(source)
        for piece in range(start, stop, len(buffer)):
            size = min(len(buffer), stop - piece)
            chunk = buffer[:size]
            if _read_into(reader, chunk) != size:
                return False
            if not (source.startswith(chunk, piece) if fast else chunk == view[piece : piece + size]):
                return False
    return True


def _read_into(reader, view):
    """Fill `view` from `reader`; returns how many bytes came (fewer at the end of the file)."""
    done = 0
    while done < len(view):
        got = reader.readinto(view[done:])
        if not got:
            break
        done += got
    return done


# --- fault injection (CONTRIBUTING.md#fault-injection) and signals during a write -----------------


class _Faults:
    """Test-only fault injection (CONTRIBUTING.md#fault-injection). BETTER_EDIT_FAULT is a
    comma-separated list of rules AT or AT:WHAT. AT is K (the K-th write, fsync, rename, create,
    link, unlink or mkdir of a commit), a KIND of step (every one of them) or a named point outside
    commits (`recover`: a commit record just opened by the recovery; `undo`: its undo about to
    start; `locked`: a call's file locks just taken; `journal`: a commit's journal folder made,
    its record not yet; `replacing`: a commit's file about to be renamed into place, after its last
    check; `swapped`: that file swapped in, what its name held not yet looked at; `applied`: a
    commit's file just written; `items`: an edit's or patch's
    items checked, their files not yet walked to; `committed`: a commit over, its result not yet
    out; `streamed`: a large file's read between its two passes). WHAT is an errno name
    (ENOSPC by default; EIO, EPERM...), KILL (SIGKILL there) or STOP (SIGSTOP there, for a test to
    interleave two processes and SIGCONT this one). "count" writes `fault steps: N` to stderr
    after each commit. Unset (the only case outside tests), step() and point() only return."""

    spec = os.environ.get("BETTER_EDIT_FAULT")
    rules = [] if spec in (None, "count") else [rule.partition(":")[::2] for rule in spec.split(",")]
    armed = False
    count = 0

    @classmethod
    def arm(cls):
        cls.armed, cls.count = bool(cls.spec), 0

    @classmethod
    def report(cls):
        if cls.spec == "count":
            sys.stderr.write(f"fault steps: {cls.count}\n")

    @classmethod
    def step(cls, kind):
        """Before each I/O step of a commit: where a signal that came during it is acted on
        (_die_cleanly), and where a fault is injected."""
        if _SIGNAL_STATE["pending"] and _SIGNAL_STATE["commit"] == 1:
            _SIGNAL_STATE["commit"] = 2
            raise _Interrupted(_SIGNAL_STATE["pending"])
        if not cls.armed:
            return
        cls.count += 1
        for at, what in cls.rules:
            if at.strip() in (str(cls.count), kind):
                cls._strike(what, f"{kind} #{cls.count}")

    @classmethod
    def point(cls, name):
        for at, what in cls.rules:
            if at.strip() == name:
                cls._strike(what, name)

    @staticmethod
    def _strike(what, where):
        what = what.strip() or "ENOSPC"
        if what in ("KILL", "STOP"):
            import signal

            os.kill(os.getpid(), signal.SIGKILL if what == "KILL" else signal.SIGSTOP)
            return
        number = errno_of(what) or 5
        raise OSError(number, f"{os.strerror(number)} (injected at {where})")


# Temp files being written right now, so a signal handler can remove them (docs/behaviour.md#writing-safely): the one
# piece of process-wide state, because a signal reaches the process, not a Context.
_LIVE_TEMPS = {}


def _remove_live_temps():
    for key, entry in list(_LIVE_TEMPS.items()):
        if key == "guarded":
            continue
        folder, name = entry
        folder.unlink(name)
        _LIVE_TEMPS.pop(key, None)


# commit: 1 in a commit (undo possible), 2 undoing; pending: a signal that came meanwhile; stood:
# (language, event id) of each change that stands and whose result is not out yet (_say_stood)
_SIGNAL_STATE = {"commit": 0, "pending": None, "stood": []}


def _die_cleanly(signum, _frame):
    """SIGTERM/SIGHUP/SIGINT (docs/behaviour.md#writing-safely): during a commit, noted, and acted
    on at its next I/O step (_Faults.step raises _Interrupted: the commit unwinds through its undo
    and commit_files dies by the signal once the files are back) or when it ends; while undoing,
    after the undo; otherwise remove our temp files and die by the signal as usual. Raising here
    could land between any two steps of the program (a folder closed but not yet marked so), and
    the undo then failed on some files: a signal mid-commit left old and new files mixed."""
    if _SIGNAL_STATE["commit"]:
        _SIGNAL_STATE["pending"] = _SIGNAL_STATE["pending"] or signum
        return
    if _SIGNAL_STATE["stood"]:  # (after a commit, before its result is out: the change stands)
        _say_stood(signum)
    _die_by(signum)


def _die_by(signum):
    import signal

    _remove_live_temps()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


class _Interrupted(BaseException):
    """A signal (SIGTERM, SIGHUP, SIGINT) arrived during a commit: undo, then die by it."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _guard_signals():
    """Installed before the first temp file is made (so a read never pays for `import signal`)."""
    if _LIVE_TEMPS.get("guarded"):
        return
    import signal

    for name in ("SIGTERM", "SIGHUP", "SIGINT"):
        number = getattr(signal, name, None)
        try:
            if number is not None and signal.getsignal(number) in (
                signal.SIG_DFL,
                signal.default_int_handler,
            ):
                signal.signal(number, _die_cleanly)
        except (ValueError, OSError):  # not the main thread: the caller owns the signals
            return
    _LIVE_TEMPS["guarded"] = True


# --- folders: names beside a file, renames, fsync -------------------------------------------------


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # (a FIFO put where a file was is not waited on)


# errnos of a link(2) that this filesystem (FAT, some network shares) or this file cannot have
_NO_HARD_LINKS = ("EPERM", "EOPNOTSUPP", "ENOTSUP", "ENOSYS", "EMLINK", "EXDEV")


@functools.cache
def _renameat2():
    """libc's renameat2 (Linux, glibc 2.28 and later), or None."""
    if not sys.platform.startswith("linux") or os.environ.get("BETTER_EDIT_PORTABLE_FALLBACKS"):
        return None
    try:
        import ctypes

        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (ImportError, OSError, AttributeError):
        return None
    call.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    call.restype = ctypes.c_int
    return call


def _ctypes_errno():
    import ctypes

    return ctypes.get_errno()


class _Folder:
    """The folder of a file: a descriptor used with dir_fd=... (POSIX), else its path (Windows)."""

    def __init__(self, path, fd):
        self.path = path
        self.fd = fd

    def _at(self, name):
        return (name, {"dir_fd": self.fd}) if self.fd is not None else (os.path.join(self.path, name), {})

    def open(self, name, flags, mode=0o666):
        path, kwargs = self._at(name)
        return os.open(path, flags | getattr(os, "O_BINARY", 0) | _CLOEXEC, mode, **kwargs)

    def lstat(self, name):
        path, kwargs = self._at(name)
        return os.stat(path, follow_symlinks=False, **kwargs)

    def stat(self):
        """The folder's own stat (None when it cannot be looked at)."""
        try:
            return os.fstat(self.fd) if self.fd is not None else os.stat(self.path)
        except OSError:
            return None

    def device(self):
        """The st_dev of the folder (None when it cannot be looked at)."""
        st = self.stat()
        return None if st is None else st.st_dev

    def access(self, name):
        path, kwargs = self._at(name)
        try:
            return os.access(path, os.W_OK, **kwargs)
        except (OSError, NotImplementedError):
            return True

    def mkdir(self, name):
        path, kwargs = self._at(name)
        _Faults.step("mkdir")
        os.mkdir(path, 0o777, **kwargs)

    def enter(self, name, file):
        """The sub-folder `name` (this handle is closed); a symlink there is refused, not followed."""
        if self.fd is None:
            return _Folder(os.path.join(self.path, name), None)
        try:
            fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=self.fd)
        except OSError as exc:
            if _errno_name(exc) in ("ELOOP", "ENOTDIR"):
                raise ToolError(
                    "SANDBOX", "sandbox_name", file=file, why=f"{name} became a symlink"
                ) from None
            raise os_error(exc, os.path.join(self.path, name)) from None
        self.close()
        return _Folder(os.path.join(self.path, name), fd)

    def link(self, name, target, beside=False):
        """Hard-link the file `name` (never a symlink's target) to the absolute path `target`, or
        (`beside`) to the name `target` in this folder. (The caller checks that the link is the
        inode it read, so the by-name fallback of platforms without linkat cannot keep the wrong file.)"""
        _Faults.step("link")
        if self.fd is not None:
            try:
                dst_fd = self.fd if beside else None
                os.link(name, target, src_dir_fd=self.fd, dst_dir_fd=dst_fd, follow_symlinks=False)
                return
            except (NotImplementedError, TypeError):
                pass
        os.link(os.path.join(self.path, name), os.path.join(self.path, target) if beside else target)

    def unlink(self, name):
        with _suppress_os():
            self.delete(name)

    def delete(self, name):
        path, kwargs = self._at(name)
        os.unlink(path, **kwargs)

    def create_name(self, temp, name, file):
        """The new file `temp` gets the name `name` only while no file has it: a file another
        program made there since we looked stays, and the commit is CONFLICT (a hard link cannot
        replace a name, a rename would). A file system without hard links gets the rename."""
        try:
            self.link(temp, name, beside=True)
        except FileExistsError:
            raise ToolError("CONFLICT", "conflict", file=file) from None
        except OSError as exc:  # (FAT, some network file systems: no hard links)
            if _errno_name(exc) not in _NO_HARD_LINKS:
                raise  # (a full disk, an I/O error: a rename might replace a file made meanwhile)
            self.rename(temp, name)
            return
        _Faults.step("unlink")
        self.delete(temp)

    def rename(self, old, new):
        if self.fd is not None:
            os.replace(old, new, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        else:
            os.replace(os.path.join(self.path, old), os.path.join(self.path, new))

    def exchange(self, old, new):
        """Swap the files named `old` and `new` in one step (Linux's renameat2 RENAME_EXCHANGE);
        False where the system or the file system cannot (nothing was done: the caller renames)."""
        call = _renameat2()
        if call is None:
            return False
        names = [
            os.fsencode(name if self.fd is not None else os.path.join(self.path, name)) for name in (old, new)
        ]
        at = self.fd if self.fd is not None else -100  # (AT_FDCWD)
        if call(at, names[0], at, names[1], 2) == 0:
            return True
        number = _ctypes_errno()
        if number in (errno_of("EINVAL"), errno_of("ENOSYS"), errno_of("EPERM"), errno_of("ENOTSUP")):
            return False  # (a kernel, file system or sandbox without it)
        raise OSError(number, os.strerror(number), self.path)

    def write_in_place(self, fc):
        """A hard-linked file: its new bytes written into the same inode, so the links stay shared
        (its old bytes are in the commit's copy, for the undo)."""
        fd = self.open(fc.place.name, os.O_RDWR | _NOFOLLOW | _NONBLOCK)
        try:  # (checked again here, with no step between the check and the write)
            if file_signature(os.fstat(fd)) != file_signature(fc.st):
                raise ToolError("CONFLICT", "conflict", file=fc.file)
            _rewrite(fd, fc.payload, fc.real)
        finally:
            os.close(fd)

    def sweep_temps(self, name, st=None, listings=None):
        """Remove temp files left here by killed processes (their pid no longer runs), and their
        kept names of a file that are only a second name of that file as it is (`st` for `name`):
        a process killed before its commit record was written, or whose undo could not remove
        them (the folder was made read-only meanwhile). True if a kept name of `name` went.
        `listings` ({folder path: names}) keeps this folder's listing for the next file of the
        same call: a be-edit of 500 files in a folder of 5,000 listed it 500 times (2.8 s)."""
        prefix, dropped = _side_prefix(name), False
        for entry in self._side_names(listings):
            match = _SIDE_NAME.fullmatch(entry)
            if not match or _process_alive(int(match.group(2))):
                continue
            own = entry.startswith(prefix)
            if match.group(3) == "tmp" or self._names_file(
                entry, st if own else self._lstat_or_none(match.group(1))
            ):
                self.unlink(entry)  # (another file's kept name too: when it is a second name of that file)
                dropped = dropped or (own and match.group(3) == "old")
        return dropped

    def _lstat_or_none(self, name):
        try:
            return self.lstat(name)
        except OSError:
            return None

    def _side_names(self, listings):
        """The names here shaped like the ones we put beside files (.NAME.be-...tmp or .old), from
        `listings` when this call listed the folder already ([] when it cannot be listed)."""
        names = None if listings is None else listings.get(self.path)
        if names is None:
            try:
                names = os.listdir(self.fd if self.fd is not None else self.path)
            except OSError:
                return []
            names = [n for n in names if n.endswith((".tmp", ".old")) and ".be-" in n]
            if listings is not None:
                listings[self.path] = names
        return names

    def _names_file(self, entry, st):
        """Whether `entry` is a second name of the file `st` is of."""
        try:
            return st is not None and _identity(self.lstat(entry)) == _identity(st)
        except OSError:
            return False

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _rewrite(fd, payload, path):
    """Overwrite the whole file `fd` with `payload` in place (same inode), fsync and read it back."""
    os.lseek(fd, 0, os.SEEK_SET)
    _Faults.step("write")
    _write_payload(fd, payload)
    os.ftruncate(fd, payload_size(payload))
    _Faults.step("fsync")
    os.fsync(fd)
    if not _holds(fd, payload):
        raise ToolError("IO", "readback_temp", path=path)


def _process_alive(pid):
    if pid == os.getpid() or os.name == "nt":  # (os.kill(pid, 0) is not a probe on Windows)
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, ValueError, OverflowError):  # (a name's number beyond any pid: not ours)
        return True  # exists but not ours, or cannot tell: leave its file alone
    return True


_XATTRS = hasattr(os, "listxattr") and not PORTABLE_FALLBACKS  # (Linux)


def _copy_xattrs(folder, name, fd, src=None):
    """The old file's extended attributes onto the new one (Linux), after its mode: user tags, a
    POSIX ACL (system.posix_acl_access: without it the group bits, which are the ACL's mask, would
    be the group's own rights), a security label. One that cannot be set (a namespace needing
    privileges, a file system without them) is left, as the owner is. `src`: the old file, when
    the caller has it open already."""
    opened = None
    try:
        if src is None:
            src = opened = folder.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
        for attribute in os.listxattr(src):
            with _suppress_os():
                os.setxattr(fd, attribute, os.getxattr(src, attribute))
    except OSError:
        pass
    finally:
        if opened is not None:
            os.close(opened)


def _set_mode(fd, temp, mode):
    if hasattr(os, "fchmod") and not PORTABLE_FALLBACKS:
        os.fchmod(fd, mode)
    else:
        os.chmod(temp, mode)


def _copy_owner_and_mode(fd, temp, old_stat):
    _copy_owner(fd, old_stat.st_uid, old_stat.st_gid)
    _set_mode(fd, temp, old_stat.st_mode & 0o7777)


def _copy_owner(fd, uid, gid):
    if hasattr(os, "fchown"):
        try:
            os.fchown(fd, uid, gid)
        except OSError:  # not permitted: the new file keeps our owner, and the group if we are in it
            with _suppress_os():
                os.fchown(fd, -1, gid)


# ====================================================================================================
# 8. Stores: snapshots, chips and the commit journal (docs/behaviour.md#snapshots, #journaled-commits)
# ====================================================================================================
#
# One file per record under BASE/snapshots/WSID/ and BASE/chips/WSID/, each written atomically with
# mode 0600 in folders of mode 0700. Every listing reads the folder again, so processes sharing a
# workspace (a CLI edit, several servers) see each other's records. A store-wide lock serialises
# writers; readers skip files they cannot parse, with a warning on stderr.


def _private_dir(path):
    os.makedirs(path, mode=0o700, exist_ok=True)
    with _suppress_os():
        os.chmod(path, 0o700)


def _write_private(path, data, sync=True):
    """Atomically write `data` (bytes) to `path` with mode 0600; no temp file is left on failure.
    `sync=False` skips the fsync (a cache file whose loss costs nothing)."""
    temp = f"{path}.{os.urandom(4).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | getattr(os, "O_BINARY", 0)
    fd = os.open(temp, flags, 0o600)
    try:
        try:
            _Faults.step("write")
            _write_all(fd, data)
            if sync:
                _Faults.step("fsync")
                os.fsync(fd)
        finally:
            os.close(fd)
        _Faults.step("rename")
        os.replace(temp, path)
    except BaseException:
        with _suppress_os():
            os.unlink(temp)
        raise


def _store_warning(ctx, path, detail):
    _print_error(tr(ctx.lang, "cli.warning", text=tr(ctx.lang, "w.store_skipped", path=path, detail=detail)))


def _new_id(taken):
    for _ in range(5):  # os.urandom: the same source as `secrets`, without its imports
        candidate = os.urandom(3).hex()
        if candidate not in taken:
            return candidate
    return os.urandom(6).hex()


def _now():
    import time

    return time.time()


def _read_json_object(path):
    """The JSON object in the regular file `path`, opened without following links or blocking;
    OSError or ValueError otherwise."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | getattr(os, "O_BINARY", 0))
    try:
        return _json_object_in(fd)
    finally:
        os.close(fd)


def _json_object_in(fd):
    """The JSON object in the regular file open as `fd` (read from its start; `fd` stays open)."""
    import json
    import stat as stat_module

    if not stat_module.S_ISREG(os.fstat(fd).st_mode):
        raise ValueError("not a regular file")
    with open(fd, "rb", closefd=False) as handle:
        handle.seek(0)
        record = json.loads(handle.read())
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    return record


def _load_json(ctx, path):
    """A store record, or None (with a warning) for anything that is not a readable JSON object file.

    Opened without following links and without blocking, so a FIFO or a link placed in the store
    cannot hang or redirect us.
    """
    try:
        return _read_json_object(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        _store_warning(ctx, path, exc)
        return None


_SNAPSHOT_NAME = _LazyPattern(r"([0-9]{1,20})-([0-9a-f]{6,12})\.json")


def _snapshot_json(meta):
    """A snapshot's metadata as strict JSON; a path that is not valid UTF-8 is kept exactly in
    `file_bytes` (hex), beside its display form in `file`."""
    shown = display_text(meta["file"])
    if shown != meta["file"]:
        meta = dict(meta, file=shown, file_bytes=os.fsencode(meta["file"]).hex())
    folders = meta.get("created_folders")
    if folders:
        meta["created_folders"] = [f for f in folders if display_text(f) == f]
    return dumps_strict(meta).encode("utf-8")


def _by_event(items):
    """[(event_id, size, record)] in order, as [[event_id, total size, [record, ...]], ...]: one
    entry per event, in the order of its first record. (The records of two events committed at
    once by two processes interleave; they edit different files, or their locks would have made
    one wait for the other.)"""
    events = {}
    for event_id, size, record in items:
        entry = events.setdefault(event_id, [event_id, 0, []])
        entry[1] += size
        entry[2].append(record)
    return list(events.values())


def _add_record_facts(record, place, old_stat, files):
    """A snapshot record's optional facts: every file of its event, the folders its edit made, and
    the permission bits a rollback that makes the file again gives it back."""
    if files:
        record["files"] = list(files)
    if place.created:
        record["created_folders"] = list(place.created)
    if old_stat is not None:
        record["before_mode"] = old_stat.st_mode & 0o7777
        record["before_owner"] = [old_stat.st_uid, old_stat.st_gid]


def _beyond_bounds(items, most):
    """How many of the oldest `items` [(event_id, size, records)], oldest first, must go for the
    rest to be at most `most` events and SNAPSHOT_TOTAL_BYTES (one pass: each looked at once)."""
    total, drop = sum(size for _eid, size, _records in items), 0
    while drop < len(items) and (len(items) - drop > most or total > SNAPSHOT_TOTAL_BYTES):
        total -= items[drop][1]
        drop += 1
    return drop


class SnapshotStore:
    """Snapshots of files before each edit, persisted per workspace (docs/behaviour.md#snapshots).

    Per snapshot: `SEQ-ID.json` (metadata) and `SEQ-ID.bin` (the raw bytes before, absent when the
    edit created the file). The .bin is a hard link to the old inode where possible, so keeping
    the old bytes costs no copy.
    """

    def __init__(self, ctx):
        self.ctx = ctx
        self.dir = ctx.store_dir("snapshots")

    def lock(self):
        return FileLock(self.ctx, "store:" + self.dir)

    def list(self):
        """Metadata records, oldest first (by sequence number)."""
        if not self.ctx.persist_snapshots:
            return list(self.ctx.memory_snapshots)
        records, names = [], _listdir(self.dir)
        for name in names:
            if not name.endswith(".json"):
                continue
            record = _load_json(self.ctx, os.path.join(self.dir, name))
            if record is None:
                continue
            if not self._valid(record):
                _store_warning(self.ctx, os.path.join(self.dir, name), "not a snapshot record")
                continue
            if isinstance(record.get("file_bytes"), str):
                try:
                    record["file"] = os.fsdecode(bytes.fromhex(record["file_bytes"]))
                except ValueError:
                    continue
            record["_base"] = os.path.join(self.dir, name[:-5])
            records.append(record)
        records.sort(key=lambda r: (r["seq"], r["event_id"]))
        return records

    @staticmethod
    def _valid(record):
        return (
            isinstance(record.get("seq"), int)
            and isinstance(record.get("event_id"), str)
            and re.fullmatch(r"[0-9a-f]{6,12}", record["event_id"]) is not None
            and isinstance(record.get("file"), str)
            and record.get("before") in ("absent", "bytes")
            and isinstance(record.get("after_sha256"), str)
        )

    def entries(self):
        """(seq, event_id, base path) of every snapshot, oldest first, from the file names alone."""
        found = []
        for name in _listdir(self.dir):
            match = _SNAPSHOT_NAME.fullmatch(name)
            if match:
                found.append((int(match.group(1)), match.group(2), os.path.join(self.dir, name[:-5])))
        found.sort()
        return found

    def drop_stray_links(self, st):
        """Unlink .bin files of unfinished snapshots that share the inode `st` (True if any).

        A snapshot's .bin is linked to the user's file just before the rename; a process killed in
        between leaves that link, which would make the file look hard-linked by the user.
        """
        dropped = False
        names = _listdir(self.dir)
        for name in names:
            if not name.endswith(".bin") or name[:-4] + ".json" in names:
                continue
            path = os.path.join(self.dir, name)
            with _suppress_os():
                other = os.lstat(path)
                if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                    os.unlink(path)
                    dropped = True
        return dropped

    def prepare(self, place, raw, old_stat, tool, summary, event_id=None, files=None, after=None):
        """Reserve an event id (or join `event_id`: an event of several files, one record each,
        `files` naming them all; `after`: the sequence number of its previous file, so the store
        is not listed again) and keep the bytes before the edit; returns a pending record."""
        record = {
            "event_id": event_id,
            "tool": tool,
            "file": place.real,
            "before": "absent" if raw is None else "bytes",
            "before_size": 0 if raw is None else len(raw),
            "created_at": _now(),
            "summary": summary,
            "session": self.ctx.session,
        }
        _add_record_facts(record, place, old_stat, files)
        if not self.ctx.persist_snapshots:
            memory = self.ctx.memory_snapshots
            record.update(
                event_id=event_id or _new_id({r["event_id"] for r in memory}),
                seq=memory[-1]["seq"] + 1 if memory else 1,
                _bytes=raw,
            )
            return record
        _private_dir(self.dir)
        with self.lock():
            self._number(record, event_id, after)
            if raw is not None:
                self._keep_before(record["_base"] + ".bin", place, raw, old_stat)
                kept = os.stat(record["_base"] + ".bin")  # (a program that kept the old file open
                record["before_signature"] = [kept.st_size, kept.st_mtime_ns]  # may write it later)
        return record

    def _number(self, record, event_id, after):
        """The record's event id (`event_id`, or a new one), sequence number (after the store's
        last one, or `after`: its event's previous file) and base path. Under the store lock."""
        import time

        last = after
        if event_id is None or after is None:
            existing = self.entries()
            last = existing[-1][0] if existing else 0
            event_id = event_id or _new_id({eid for _seq, eid, _base in existing})
        record["event_id"], record["seq"] = event_id, max(time.time_ns(), last + 1)
        record["_base"] = os.path.join(self.dir, f"{record['seq']:020d}-{record['event_id']}")

    def _keep_before(self, target, place, raw, old_stat):
        """The old bytes: a hard link to the old inode (reached through the folder handle, and
        checked to be that inode), else a copy."""
        if old_stat is not None and not written_in_place(place, old_stat):
            with _suppress_os():
                place.folder.link(place.name, target)
                linked = os.lstat(target)
                if _identity(linked) == _identity(old_stat) and linked.st_size == len(raw):
                    return
                os.unlink(target)
        _write_private(target, raw)

    def commit(self, records, after_sha256s):
        """Record the records of one finished edit (an event) under one hold of the store lock,
        so another process's eviction sees all of them or none (written one by one, an eviction
        between two took the event's first records, and a rollback then undid only the rest);
        returns warnings (persistence failures). `after_sha256s` are functions: hashing a large
        file is skipped when nobody can use the snapshot (not persisted, and no server process
        left to roll it back). The bounds are kept by tidy(), once the edit stands."""
        if not self.ctx.persist_snapshots:
            if self.ctx.mcp:  # (a CLI process ends here: its in-memory snapshot would die with it)
                for record, after_sha256 in zip(records, after_sha256s):
                    record["after_sha256"] = after_sha256()
                    self.ctx.memory_snapshots.append(record)
            return []
        for record, after_sha256 in zip(records, after_sha256s):
            record["after_sha256"] = after_sha256()
        try:
            with self.lock():
                for record in records:
                    meta = {k: v for k, v in record.items() if not k.startswith("_")}
                    _write_private(record["_base"] + ".json", _snapshot_json(meta))
        except LockBusy:
            raise  # (another process holds the store: _EventSnapshots drops this event's snapshot)
        except OSError as exc:
            return [_not_saved(self.ctx, exc)]
        return []

    def tidy(self):
        """Evict beyond the bounds and sweep orphans: after an edit's commit point (done before
        it, a failed edit had dropped an older snapshot); returns warnings."""
        if not self.ctx.persist_snapshots:
            memory = self.ctx.memory_snapshots
            return self._evict([(r["event_id"], r["before_size"], r) for r in memory])
        try:
            with self.lock():
                warnings = self._evict_files()
                self._sweep_orphans()
        except OSError:  # (the next edit tries again)
            return []
        return warnings

    def seal(self, record):
        """Once the edit stands: the old inode kept as .bin is no longer the user's file, unless
        another program gave it a name of its own while the edit ran (a backup's hard link):
        then that name keeps the inode, its mode and its bytes, and the .bin becomes a copy with
        the same size and mtime (made 0600, that name's mode went; written into later as a
        hard-linked file, the snapshot did)."""
        if self.ctx.persist_snapshots and record.get("_base") and record["before"] == "bytes":
            path = record["_base"] + ".bin"
            with _suppress_os():
                st = os.lstat(path)
                if st.st_nlink == 1:
                    os.chmod(path, 0o600)
                elif [st.st_size, st.st_mtime_ns] == record.get("before_signature"):
                    with open(path, "rb") as handle:
                        _write_private(path, handle.read())
                    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    def _evict(self, items):
        """Drop the oldest events of `items` [(event_id, size, record)] beyond the count and byte
        bounds; the records of one event (several files) go together."""
        leaving = self.ctx.leaving_events  # (a rollback's events: they go once it stands)
        items = [item for item in _by_event(items) if item[0] not in leaving]
        too_large = items[-1:] if items and items[-1][1] > SNAPSHOT_TOTAL_BYTES else []
        items = items[: len(items) - len(too_large)]  # (the newest alone over the bound: it goes alone)
        drop = _beyond_bounds(items, self.ctx.max_snapshots)
        for _event_id, _size, records in items[:drop] + too_large:
            for record in records:
                self.remove(record)
        return self._evicted_warnings(items[:drop])

    def _evicted_warnings(self, dropped):
        """One warning for each event `dropped`, or one for all when more than 3 went (a store
        filled by someone else: one warning, not thousands)."""
        bounds = {"max": self.ctx.max_snapshots, "mib": SNAPSHOT_TOTAL_BYTES >> 20}
        if len(dropped) > 3:
            return [
                (
                    "w.snapshots_evicted",
                    dict(bounds, count=len(dropped), first=dropped[0][0], last=dropped[-1][0]),
                )
            ]
        return [("w.snapshot_evicted", dict(bounds, id=event_id)) for event_id, _size, _r in dropped]

    def _sweep_orphans(self, age=600):
        """Remove .bin files whose snapshot never got its .json (a killed process), once old: dated
        by their inode's change time, which the link made to keep the old file's bytes sets (their
        mtime is the user's last save: a snapshot another call was saving was taken for old)."""
        now = _now()
        names = set(_listdir(self.dir))
        for name in names:
            if name.endswith((".bin", ".tmp")) and name.split(".")[0] + ".json" not in names:
                path = os.path.join(self.dir, name)
                with _suppress_os():
                    if now - os.lstat(path).st_ctime > age:
                        os.unlink(path)

    def _evict_files(self):
        """Evict on disk; sizes come from the .bin files, names from entries()."""
        items = []
        for _seq, event_id, base in self.entries():
            try:
                size = os.stat(base + ".bin").st_size
            except OSError:
                size = 0
            items.append((event_id, size, {"_base": base}))
        return self._evict(items)

    def remove(self, record):
        if not self.ctx.persist_snapshots:
            if record in self.ctx.memory_snapshots:
                self.ctx.memory_snapshots.remove(record)
            return
        for ext in (".json", ".bin"):
            with _suppress_os():
                os.unlink(record["_base"] + ext)

    def drop_event(self, event_id):
        """Remove every file of the event `event_id` (a commit undone after its process died)."""
        if not self.ctx.persist_snapshots:
            return
        for _seq, found, base in self.entries():
            if found == event_id:
                self.remove({"_base": base})
        for name in _listdir(self.dir):  # (the .bin of a snapshot whose .json was not written yet)
            if name.endswith(f"-{event_id}.bin"):
                with _suppress_os():
                    os.unlink(os.path.join(self.dir, name))

    def before_bytes(self, record):
        """The bytes the file held before the event's edit; CONFLICT when the kept old inode was
        written since (its size or modification time is not what the edit saw: a program that
        still had the old file open wrote into it)."""
        if record["before"] == "absent":
            return None
        if "_bytes" in record:
            return record["_bytes"]
        with open(record["_base"] + ".bin", "rb") as handle:
            st, signature = os.fstat(handle.fileno()), record.get("before_signature")
            if isinstance(signature, list) and signature != [st.st_size, st.st_mtime_ns]:
                raise ToolError(
                    "CONFLICT", "snapshot_changed", file=record["file"], event_id=record["event_id"]
                )
            return handle.read()


def _valid_chip(record, name):
    chip_id, seq, created = record.get("id"), record.get("seq", 0), record.get("created_at")
    return (
        isinstance(chip_id, str)
        and re.fullmatch(r"[0-9a-f]{6,12}", chip_id) is not None
        and name == f"chip-{chip_id}.json"
        and type(seq) is int
        and isinstance(created, (int, float))
        and not isinstance(created, bool)
    )


def _chip_to_evict(records):
    """The index of the chip that goes when the store is full: the oldest, unless chips of failed
    calls and of lines that were not JSON fill half the queue: then the oldest of those. A flood of
    them (a host sending garbage) takes at most half the chips of text edits deleted, and a failed
    call's chip outlives the next few deletes."""
    failed = [i for i, r in enumerate(records) if r.get("err_msg")]
    return failed[0] if 2 * len(failed) >= len(records) else 0


class ChipStore:
    """Chips: failed calls' arguments and deleted text, FIFO, one `chip-ID.json` each (docs/behaviour.md#chips)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.dir = ctx.store_dir("chips")

    def list(self, expired=False):
        """Chip records oldest first, leaving out (or, with `expired`, only) those older than
        BETTER_EDIT_CHIP_TTL; reading deletes nothing (save() removes the expired ones)."""
        records, now = [], _now()
        for name in _listdir(self.dir):
            if not (name.startswith("chip-") and name.endswith(".json")):
                continue
            path = os.path.join(self.dir, name)
            record = _load_json(self.ctx, path)
            if record is None:
                continue
            if not _valid_chip(record, name):
                _store_warning(self.ctx, path, "not a chip record")
                continue
            if bool(self.ctx.chip_ttl and now - record["created_at"] > self.ctx.chip_ttl) is expired:
                records.append(record)
        records.sort(key=lambda r: (r.get("seq", 0), r["created_at"], r["id"]))
        return records

    def get(self, chip_id):
        if not re.fullmatch(r"[0-9a-f]{6,12}", chip_id or ""):
            return None
        for record in self.list():
            if record["id"] == chip_id:
                return record
        return None

    def save(self, tool, args, err_msg="", text=None):
        """Store a chip; returns (id, warnings). A failure to persist is a warning, never silent."""
        import time

        warnings = []
        try:
            _private_dir(self.dir)
            with FileLock(self.ctx, "store:" + self.dir):
                self._drop_expired()
                existing = self.list()
                chip_id = _new_id({r["id"] for r in existing})
                seq = max([time.time_ns()] + [r.get("seq", 0) + 1 for r in existing])
                record = {
                    "id": chip_id,
                    "tool": tool,
                    "args": args,
                    "err_msg": err_msg,
                    "created_at": _now(),
                    "seq": seq,
                    "text": text,
                }
                data = dumps_strict(record).encode("utf-8")
                _write_private(os.path.join(self.dir, f"chip-{chip_id}.json"), data)
                while len(existing) >= self.ctx.max_chips:
                    index = _chip_to_evict(existing)
                    gone = existing.pop(index)
                    self._unlink(gone["id"])
                    key = "w.chip_evicted_failed" if index else "w.chip_evicted"
                    warnings.append((key, {"id": gone["id"], "max": self.ctx.max_chips}))
                existing.append(record)
            return chip_id, warnings
        except (OSError, ToolError, ValueError) as exc:
            detail = getattr(exc, "strerror", None) or str(exc)
            return None, [("w.chip_not_saved", {"detail": detail})]

    def sweep(self):
        """The chips older than BETTER_EDIT_CHIP_TTL deleted (a listing or an inspection of chips
        does it first: a deleted secret was to go with its TTL, not when the next chip came)."""
        if not self.ctx.chip_ttl:
            return
        try:
            with FileLock(self.ctx, "store:" + self.dir):
                self._drop_expired()
        except (OSError, ToolError):  # (a busy or unusable store: the next call deletes them)
            pass

    def _drop_expired(self):
        for old in self.list(expired=True):
            self._unlink(old["id"])

    def _unlink(self, chip_id):
        with _suppress_os():
            os.unlink(os.path.join(self.dir, f"chip-{chip_id}.json"))


# --- journaled commits (docs/behaviour.md#journaled-commits) --------------------------------------
#
# Every call that writes (single edits, write, be-edit and patch, rollback) commits through
# commit_files(), the way a database commits through a rollback journal:
#   intent   BASE/journal/WSID/ID.json names the temporaries and kept names the commit will make
#            (written, not fsynced: a process killed while preparing leaves nothing unnamed).
#   prepare  each file's new bytes go to a fsynced temporary beside it; its old inode is kept under
#            a second name beside it (a hard link: no space; a copy where links cannot be made), or,
#            for a hard-linked file written in place, as a copy in the journal folder; the snapshot
#            event is prepared.
#   record   ID.json is rewritten with the old and new inodes, fsynced with its folder, and flock-ed
#            by its writer for as long as the call runs.
#   apply    renames (deletions unlink; in-place writes come last), folders fsynced, snapshot saved.
#   commit   ID.json is renamed ID.done (its folder fsynced): from here on the call stands.
#   clean    the kept names and copies are removed, then ID.done.
# Before the commit point a failure or a signal undoes every file from what its names now hold
# (_undo_entry): the kept old version is renamed back, which needs no free space. A process that
# dies leaves its record; the next call of any process on this state directory finishes it first
# (recover_interrupted: ID.json undone, ID.done cleaned) and says so in its result's warnings.

JOURNAL_VERSION = 1


class FileCommit:
    """One file of a commit: where it is (an open Place), what it held (stat and bytes, None when
    absent) and what it will hold (`payload`, None to delete it). `check`: refuse with CONFLICT when
    the file no longer holds what was read. The commit fills in how it is written, its temporary,
    the name or copy keeping the old bytes, and the new inode."""

    __slots__ = (
        "place",
        "real",
        "file",
        "st",
        "raw",
        "payload",
        "check",
        "how",
        "temp",
        "keep",
        "new_id",
        "new_signature",
        "new_bytes",
        "after_folders",
        "mode",
        "owner",
    )

    def __init__(self, place, st, raw, payload, check=True):
        self.place, self.real, self.file = place, place.real, place.file
        self.st, self.raw, self.payload, self.check = st, raw, payload, check
        if payload is None:
            self.how = "delete"
        elif st is None:
            self.how = "create"
        else:
            self.how = "in_place" if written_in_place(place, st) else "rename"
        self.temp = self.keep = self.new_id = self.new_signature = self.new_bytes = None
        self.after_folders = []  # (made for a file a rollback deletes: removed once it stands)
        self.mode = None  # (permission bits a rollback gives the file it restores, when set)
        self.owner = None  # (and its owner and group: (uid, gid), where allowed)

    def name_parts(self, copy_path):
        """Choose the names the commit will make for this file, before making any (the intent
        record names them)."""
        name = self.place.name
        if self.how in ("rename", "create"):
            self.temp = _temp_name(name, "tmp")
        if self.how in ("rename", "delete"):
            self.keep = _temp_name(name, "old")
        elif self.how == "in_place":
            self.keep = copy_path
            self.new_bytes = [payload_size(self.payload), payload_digest(self.payload).hexdigest()]

    def entry(self, prepared=True):
        """What the commit record says of this file (enough to undo it from another process): the
        folders it made (only planned ones in an intent record)."""
        place = self.place
        folders = list(place.created)
        if not prepared:
            planned = [place.folder.path]
            for part in place.pending:
                planned.append(os.path.join(planned[-1], part))
            folders += planned[1:]
        return {
            "path": self.real,
            "how": self.how,
            "temp": self.temp,
            "keep": self.keep,
            "old": list(_identity(self.st)) if self.st is not None else None,
            "new": list(self.new_id) if self.new_id else None,
            "new_signature": self.new_signature,  # (size, mtime: what the new file held when made)
            "new_bytes": self.new_bytes,  # (size, SHA-256 of what an in-place write writes)
            "after_folders": self.after_folders,
            "folders": folders,
        }


_RECORD_ENDINGS = (".json", ".done", ".clean")  # the names of commit records (Journal.names)


class Journal:
    """The commit records of one workspace: BASE/journal/WSID/, one ID.json per running commit."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.dir = ctx.store_dir("journal")

    def write(self, commit_id, record, files, sync):
        """Write the record of commit `commit_id` (its `files`' entries added); returns (path,
        descriptor holding its lock). `sync`: fsynced with its folder before this returns (the
        record of a prepared commit); else only written (the intent: the names a killed prepare
        may leave, for the next call to clean)."""
        path = os.path.join(self.dir, commit_id + ".json")
        record = dict(record, v=JOURNAL_VERSION, pid=os.getpid(), prepared=sync)
        record["files"] = [fc.entry(prepared=sync) for fc in files]
        data = dumps_strict(record).encode("utf-8")
        temp = f"{path}.{os.getpid()}.tmp"
        flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | _CLOEXEC | getattr(os, "O_BINARY", 0)
        for attempt in range(3):
            try:
                fd = os.open(temp, flags, 0o600)
                break
            except FileNotFoundError:  # (a call of another workspace removed the folder while empty)
                if attempt == 2:
                    raise
                _private_dir(self.dir)
        try:
            _lock_record(fd, block=True)
            _Faults.step("write")
            _write_all(fd, data)
            if sync:
                _Faults.step("fsync")
                os.fsync(fd)
            _Faults.step("rename")
            os.replace(temp, path)
            if sync:
                _fsync_folder_strict(self.dir)
        except BaseException:
            os.close(fd)
            with _suppress_os():
                os.unlink(temp)
            raise
        return path, fd

    def commit(self, path, fd):
        """The commit point: ID.json becomes ID.done (its folder fsynced); returns (new path, fd).
        From here on the call stands: what is left is cleaning up (finish)."""
        done = path[: -len(".json")] + ".done"
        _Faults.step("rename")
        os.replace(path, done)
        try:
            _fsync_folder_strict(self.dir)
        except BaseException:  # not surely on disk: not committed, the undo follows
            with _suppress_os():
                os.replace(done, path)
            raise
        return done, fd

    def finish(self, path, fd, cleaned):
        """The kept names are gone (`cleaned`): the record goes too; else it stays, renamed
        ID.clean, for the next call to finish quietly (this call reported its success). Its lock
        is let go either way."""
        with _suppress_os():
            if cleaned:
                os.unlink(path)
            else:
                os.replace(path, path[: -len(".done")] + ".clean")
        os.close(fd)

    def drop(self, path, fd, keep=False):
        """After an undo: the record goes (`keep`: it stays, for the next call to finish the undo);
        its lock is let go either way. (A signal right after the commit point leaves the record
        named ID.done: it goes too, since the undo followed.)"""
        if not keep:
            with _suppress_os():
                os.unlink(path)
            with _suppress_os():
                os.unlink(path[: -len(".json")] + ".done")
            with _suppress_os():
                _fsync_folder_strict(self.dir)
        os.close(fd)

    def names(self):
        """Records: ID.json (a commit under way, or killed), ID.done (committed, being cleaned, or
        killed while cleaning) and ID.clean (committed and reported, its clean-up unfinished)."""
        return sorted(n for n in _listdir(self.dir) if n.endswith(_RECORD_ENDINGS))


def _lock_record(fd, block):
    """flock a commit record: held by its writer while it runs, so a record whose lock can be taken
    is one whose writer died. Without flock (Windows), a record's pid tells the same."""
    if os.name == "nt" or PORTABLE_FALLBACKS:
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _fsync_folder_strict(path, folder=None):
    """fsync a folder (POSIX), through the handle of a _Folder still open (a path longer than the
    system takes, in a deep tree walked by handles, cannot be opened by name); an error is
    raised, not swallowed: a commit must know."""
    if os.name == "nt":
        return
    if folder is not None and folder.fd is not None:
        _Faults.step("fsync")
        os.fsync(folder.fd)
        return
    fd = os.open(path, os.O_RDONLY | _CLOEXEC)
    try:
        _Faults.step("fsync")
        os.fsync(fd)
    finally:
        os.close(fd)


_SIDE_NAME = _LazyPattern(r"\.(.+)\.be-([0-9]+)-[0-9a-f]{8}\.(tmp|old)", re.S)  # (NAME, pid, kind)


def _temp_name(name, kind):
    return f"{_side_prefix(name)}{os.getpid()}-{os.urandom(4).hex()}.{kind}"


def _side_prefix(name):
    """`.NAME.be-`, how the names we put beside the file `name` start; NAME is cut (at a character)
    so that the longest of them, `.NAME.be-PID-XXXXXXXX.tmp`, fits in the 255 bytes a file
    system gives one name. A file of a long name (85 Chinese characters are 255 bytes) could not
    be edited at all."""
    raw = os.fsencode(name)
    room = 255 - len(".") - len(".be-1234567890-12345678.tmp")
    if len(raw) > room:
        while room and raw[room] & 0xC0 == 0x80:  # (not inside a UTF-8 character)
            room -= 1
        name = os.fsdecode(raw[:room])
    return f".{name}.be-"


def _prepare_or_conflict(ctx, fc):
    """_prepare_file; a file that was read and is now gone (another program removed it) is a CONFLICT."""
    try:
        _prepare_file(ctx, fc)
    except FileNotFoundError:
        if fc.st is None:
            raise
        raise ToolError("CONFLICT", "conflict", file=fc.file) from None


def _prepare_file(ctx, fc):
    """Prepare one file: folders, temporary with the new bytes, kept old bytes. Raises on failure
    (what was made is in `fc`, for _undo_entry to remove)."""
    place = fc.place
    if place.pending:
        _check_folder_writable(place.folder)  # (root makes folders in a read-only one too)
        place.make_folders(ctx)
    if fc.st is not None and place.lstat() is None:  # read, and gone: another program removed it
        raise ToolError("CONFLICT", "conflict", file=fc.file)
    check_writable(place, fc.st)
    if fc.how == "delete":  # (a deletion needs the folder, also of a file written in place)
        _check_deletable(place, fc.st)
    if fc.how in ("rename", "create"):
        _write_temp(fc, place.folder, place.name)
    if fc.how in ("rename", "delete"):
        _keep_old_name(fc, place.folder, place.name)
    elif fc.how == "in_place":
        _keep_copies(fc)


def _keep_copies(fc):
    """The copies an in-place write keeps in the journal: its old bytes, for the undo, and its new
    bytes, by which an undo after a kill tells a write of ours cut short from another program's."""
    if fc.raw is None:  # (callers pass the bytes they read; never overwrite without them)
        raise ToolError("CONFLICT", "conflict", file=fc.file)
    if fc.keep is None:
        return
    try:
        _Faults.step("write")
        _write_private(fc.keep, fc.raw)
        _Faults.step("write")
        _write_private(fc.keep + ".new", b"".join(memoryview(s)[a:b] for s, a, b, _o in fc.payload))
    except OSError as exc:  # (on the cache's file system, not the file's: named so)
        raise os_error(exc, exc.filename if isinstance(exc.filename, str) else fc.keep) from None


def _write_temp(fc, folder, name):
    """The temporary beside the file, with the new bytes (pieces of the old file copied from it,
    which must still be the file read), its owner and mode, fsynced and read back. It is made
    readable by us alone until then: made with the umask's 0644, a 0600 file's new text could be
    opened by another user while it was written, and read through that descriptor for good."""
    _LIVE_TEMPS[id(fc)] = (folder, fc.temp)
    private = fc.st is not None or fc.mode is not None  # (made 0600: its mode comes once it is whole)
    fd = folder.open(fc.temp, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600 if private else 0o666)
    src_fd = None
    try:
        if fc.st is not None and any(piece[3] is not None for piece in fc.payload):
            src_fd = folder.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
            if _identity(os.fstat(src_fd)) != _identity(fc.st):
                raise ToolError("CONFLICT", "conflict", file=fc.file)
        _Faults.step("write")
        _write_payload(fd, fc.payload, src_fd)
        _temp_owner_and_mode(fc, fd, folder, name, src_fd)
        _Faults.step("fsync")
        os.fsync(fd)
        if not _holds(fd, fc.payload):
            raise ToolError("IO", "readback_temp", path=fc.real)
        written = os.fstat(fd)
        fc.new_id, fc.new_signature = _identity(written), _size_and_mtime(written)
    finally:
        os.close(fd)
        if src_fd is not None:
            os.close(src_fd)


def _temp_owner_and_mode(fc, fd, folder, name, src_fd):
    """The temporary of `fc`, its bytes written, gets the old file's owner, mode and extended
    attributes, or, made again by a rollback, the owner and mode its snapshot kept."""
    temp = os.path.join(folder.path, fc.temp)
    if fc.st is not None:
        _copy_owner_and_mode(fd, temp, fc.st)
        if _XATTRS:
            _copy_xattrs(folder, name, fd, src_fd)
    elif fc.owner is not None:
        _copy_owner(fd, *fc.owner)
    if fc.mode is not None:
        _set_mode(fd, temp, fc.mode)


def _keep_old_name(fc, folder, name):
    """A second name (`fc.keep`) for the old file, which must be the file read; a copy where the
    filesystem has no hard links."""
    try:
        folder.link(name, fc.keep, beside=True)
    except OSError as exc:
        if _errno_name(exc) not in _NO_HARD_LINKS:
            raise
        _keep_copy(folder, fc)  # a filesystem without hard links: the old bytes, copied
    else:
        if _identity(folder.lstat(fc.keep)) != _identity(fc.st):
            raise ToolError("CONFLICT", "conflict", file=fc.file)


def _keep_copy(folder, fc):
    """The old bytes kept beside the file as a copy with its mode (costs space; the undo is still a
    rename). Read back: a copy that the disk did not keep is no copy."""
    data = fc.raw
    if data is None:
        fd, _st = fc.place.open()
        with open(fd, "rb", closefd=True) as handle:
            data = handle.read()
    fd = folder.open(fc.keep, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        _Faults.step("write")
        _write_all(fd, data)
        _copy_owner_and_mode(fd, os.path.join(folder.path, fc.keep), fc.st)
        _Faults.step("fsync")
        os.fsync(fd)
        if not _holds(fd, payload_of(data)):
            raise ToolError("IO", "readback_temp", path=fc.real)
    finally:
        os.close(fd)


def _apply_file(fc):
    """Make the target hold its new bytes (or go)."""
    folder, name = fc.place.folder, fc.place.name
    if fc.how == "create":
        _Faults.step("create")
        folder.create_name(fc.temp, name, fc.file)
        _LIVE_TEMPS.pop(id(fc), None)
    elif fc.how == "rename":
        _Faults.step("rename")
        _replace_checked(fc, folder, name)
        _LIVE_TEMPS.pop(id(fc), None)
    elif fc.how == "delete":
        _Faults.step("unlink")
        folder.delete(name)
    else:  # (its copy's mark says, to an undo after a kill, that the bytes there may be ours)
        try:
            _mark_writing(fc.keep, True)
        except FileNotFoundError as exc:  # (the cache removed meanwhile: the journal's own error,
            raise os_error(exc, os.path.dirname(fc.keep)) from None  # not the file's: IO, undone)
        folder.write_in_place(fc)
        try:
            _mark_writing(fc.keep, False)
        except FileNotFoundError:  # (gone with its folder: the bytes are written, the undo has them)
            pass


class _NotApplied(Exception):
    """_apply_file left its file as another program left it (a save swapped back): CONFLICT."""


def _replace_checked(fc, folder, name):
    """The new file `fc.temp` in place of `name`. Where the system can swap two names in one step,
    it does, then looks at what the name held: a file another program saved by rename since the
    last check (in the moment before the swap) would have been lost without a word; it is swapped
    back and the commit is CONFLICT. (Its old file is kept under another name: the temporary one
    goes.) Elsewhere a rename."""
    _Faults.point("replacing")
    if not folder.exchange(fc.temp, name):
        folder.rename(fc.temp, name)
        return
    _Faults.point("swapped")
    if _identity_of(folder, fc.temp) != _identity(fc.st):
        _Faults.step("rename")
        if not folder.exchange(fc.temp, name):  # (then the undo puts that save back: _undo_renamed)
            raise OSError(errno_of("EIO"), "the swap back of another program's save failed", folder.path)
        raise _NotApplied
    _Faults.step("unlink")
    folder.delete(fc.temp)


def _drop_copy(copy_path):
    """An in-place file's copy, its new bytes and its marks (_mark_writing) removed, those that are there."""
    for path in (copy_path, copy_path + ".new", copy_path + ".w", copy_path + ".u"):
        with _suppress_os():
            os.unlink(path)


def _mark_writing(copy_path, on, mark=".w"):
    """The mark `COPY.w` beside an in-place file's copy, there while its in-place write runs
    (`COPY.u` while an undo writes the copy back: whatever the file holds then is ours)."""
    if copy_path is None:
        return
    _Faults.step("create" if on else "unlink")
    if on:
        os.close(os.open(copy_path + mark, os.O_WRONLY | os.O_CREAT | _CLOEXEC, 0o600))
    else:
        os.unlink(copy_path + mark)


_UNCHANGED = ""  # (an undo that found nothing to put back: an earlier undo did, or nothing was applied)


def _undo_entry(folder, name, entry, before=None, prepared=True):
    """Put one file of an unfinished commit back, judging from what its names hold now; removes
    its temporary and kept name. Returns None when it put the file back, _UNCHANGED when there was
    nothing to put back, or why it was left alone (another program changed it since)."""
    how, temp, keep = entry["how"], entry.get("temp"), entry.get("keep")
    new, old = _entry_identity(entry, "new"), _entry_identity(entry, "old")
    renamed = how in ("rename", "delete")
    if not prepared:  # killed while preparing: nothing was applied, only what was made goes
        _delete_quietly(folder, keep if renamed else None, temp)
        return _UNCHANGED
    left = _UNCHANGED
    if renamed and keep:
        left = _undo_renamed(folder, name, entry, old, new)
    elif how == "create":
        left = _undo_create(folder, name, new, entry.get("new_signature"))
    elif how == "in_place" and (keep or before is not None):
        left = _undo_in_place(folder, name, keep, old, before, entry.get("new_bytes"))
    _delete_quietly(folder, temp)
    return left


def _undo_renamed(folder, name, entry, old, new):
    """_undo_rename; but where the commit's swap took out another program's save and was killed
    before it swapped that back (it is under the temporary name), that save goes back in place."""
    temp, keep = entry.get("temp"), entry["keep"]
    if entry["how"] == "rename" and temp and _identity_of(folder, temp) not in (None, new, old):
        folder.rename(temp, name)
        return "changed by another program since" + _kept_words(os.path.join(folder.path, keep))
    return _undo_rename(folder, name, keep, old, new, entry.get("new_signature"))


def _undo_create(folder, name, new, new_signature=None):
    """A created file goes, while its name still holds what the commit made and nobody wrote into
    it since (its size and mtime are those it was made with); else why it stays."""
    if new is None or _identity_of(folder, name) != new:
        return _UNCHANGED
    if new_signature and _signature_of(folder, name) != list(new_signature):
        return "changed by another program since"
    folder.delete(name)
    return None


def _entry_identity(entry, key):
    return tuple(entry[key]) if entry.get(key) else None


def _size_and_mtime(st):
    """What a commit record keeps of a new file to tell it was written into since: [size, mtime]."""
    return [st.st_size, st.st_mtime_ns]


def _signature_of(folder, name):
    """_size_and_mtime of `name` in `folder`, None when there is no such name."""
    try:
        return _size_and_mtime(folder.lstat(name))
    except FileNotFoundError:
        return None


def _identity_of(folder, name):
    """(device, inode) of `name` in `folder`, None when there is no such name."""
    try:
        return _identity(folder.lstat(name))
    except FileNotFoundError:
        return None


def _delete_quietly(folder, *names):
    for made in names:
        if made:
            with _suppress_os():
                folder.delete(made)


def _undo_rename(folder, name, keep, old, new, new_signature=None):
    """The old file, kept under `keep`, back under `name` unless another program changed it: put
    another file there, or wrote into the new one since (its size or mtime are not those it was
    made with: an append after a SIGKILL was lost to the undo). Then the kept name stays, holding
    the old text, and the reason says where; else it goes (renamed back, or a second name of the
    file when the rename was never made)."""
    now, kept = _identity_of(folder, name), _identity_of(folder, keep)
    if kept is not None and now != kept and now != old:  # (a kept copy is not the old inode)
        written = now == new and new_signature and _signature_of(folder, name) != list(new_signature)
        if not written and now in (None, new):  # applied (or the name is gone): the old one goes back
            folder.rename(keep, name)
            return None
        return "changed by another program since" + _kept_words(os.path.join(folder.path, keep))
    _delete_quietly(folder, keep)
    return _UNCHANGED


# an in-place file's copy in the journal: PID-COMMIT-N.copy (_CommitRun.prepare)
_COPY_NAME = r"([0-9]+)-[0-9a-f]{8}-[0-9]+\.copy"


def _undo_in_place(folder, name, copy_path, old, before=None, new_bytes=None):
    """An in-place write undone: the copy's bytes (or `before`, in the process that wrote) written
    back into the same inode. A file that holds bytes no write of ours can have left (`new_bytes`:
    the size and SHA-256 of what the write wrote) was written by another program since, after a
    kill or in process: left as it is, its old text kept where the reason says (_keep_old_copy)."""
    before = _copy_bytes(copy_path, name) if before is None else before
    if not isinstance(before, bytes):  # (no copy: never written; or the words of an undo that left it)
        return before or _UNCHANGED
    judged = copy_path is not None and isinstance(new_bytes, list)  # (no copy: nowhere to keep it)
    fd = _open_if_same(folder, name, old)
    if isinstance(fd, str):
        return f"{fd} by another program since" + (_keep_old_copy(copy_path, name) if judged else "")
    try:
        if _holds(fd, payload_of(before)):
            return _UNCHANGED
        if judged and not _ours_or_undoing(fd, before, new_bytes, copy_path):
            return "changed by another program since" + _keep_old_copy(copy_path, name)
        _write_back(fd, before, copy_path, name)
    finally:
        os.close(fd)
    return None


def _write_back(fd, before, copy_path, name):
    """The old bytes written back into the file, marked (_mark_writing `.u`) while they are; where
    the mark's folder is gone (the cache removed meanwhile) unmarked, rather than left undone while
    the error said they were kept."""
    try:
        _mark_writing(copy_path, True, ".u")
    except FileNotFoundError:
        _rewrite(fd, payload_of(before), name)
        return
    _rewrite(fd, payload_of(before), name)
    _mark_writing(copy_path, False, ".u")


def _copy_bytes(copy_path, name):
    """The bytes of an in-place file's copy; else None (never made: the file was never written),
    or the words of an undo that left the file and kept the copy (in process: said again)."""
    try:
        with open(copy_path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        kept = _kept_path(copy_path, name)
        return "changed by another program since" + _kept_words(kept) if os.path.exists(kept) else None


def _open_if_same(folder, name, old):
    """A descriptor of `name` to write, while it is the inode `old`; else "removed" or "replaced"."""
    try:
        fd = folder.open(name, os.O_RDWR | _NOFOLLOW | _NONBLOCK)
    except FileNotFoundError:
        return "removed"
    if _identity(os.fstat(fd)) != old:
        os.close(fd)
        return "replaced"
    return fd


def _keep_old_copy(copy_path, name):
    """The copy of an in-place file that an undo leaves, moved out of the journal to the state
    directory's `kept` folder, where no record's end removes it; the words that say where."""
    if not re.fullmatch(_COPY_NAME, os.path.basename(copy_path)):
        return ""  # (a record read from disk names a copy of ours, nothing else, to move)
    kept = _kept_path(copy_path, name)
    _private_dir(os.path.dirname(kept))
    os.replace(copy_path, kept)
    _fsync_folder_strict(os.path.dirname(kept))
    return _kept_words(kept)


def _kept_path(copy_path, name):
    """Where _keep_old_copy moves the copy BASE/journal/WSID/PID-ID-N.copy of the file `name`:
    BASE/kept/WSID/NAME.PID-ID-N.old."""
    journal_dir, copy_name = os.path.split(copy_path)
    base, workspace = os.path.split(journal_dir)
    return os.path.join(os.path.dirname(base), "kept", workspace, f"{name[:120]}.{copy_name[:-5]}.old")


def _kept_words(kept):
    return f"; its old text is kept as {kept}"


def _ours_or_undoing(fd, before, new_bytes, copy_path):
    """_ours() of an in-place file with the marks beside its copy: its write under way (`COPY.w`),
    or an undo of ours that began writing the copy back and was cut short (`COPY.u`)."""
    undoing = os.path.exists(copy_path + ".u")
    if not undoing and not os.path.exists(copy_path + ".w"):
        return _ours(fd, before, new_bytes)
    try:
        with open(copy_path + ".new", "rb") as handle:
            return _ours(fd, before, new_bytes, handle.read(), undoing)
    except FileNotFoundError:
        return _ours(fd, before, new_bytes)


def _ours(fd, before, new_bytes, new=None, undoing=False):
    """Whether the file `fd`, which does not hold `before`, holds what an in-place write of ours
    left: all its new bytes (`new_bytes`: size, SHA-256), or, when a kill came while it ran (`new`:
    those bytes, kept beside the copy), the start of them written over the start of `before`; with
    `undoing`, after the start of `before` an undo wrote back over either."""
    size, sha256 = new_bytes
    now = os.fstat(fd).st_size
    if now == size and _fd_sha256(fd) == sha256:
        return True
    if new is None or (now < len(before) and not undoing):  # (our write truncates only once whole)
        return False
    os.lseek(fd, 0, os.SEEK_SET)
    return _left_by_us(io.FileIO(fd, "rb", closefd=False).readall(), before, new, undoing)


def _left_by_us(held, before, new, undoing):
    """Whether the bytes `held` are what an in-place write of `new` over `before` left, cut short
    anywhere, and with `undoing` what an undo cut short then left of that."""
    start = _common_start(held, before) if undoing else 0  # (what an undo wrote back: before's start)
    if held[start:] == new[start:] and len(held) in (len(new), start):
        return True  # (the new bytes whole, under the start of `before`)
    if len(held) < len(before):
        return False
    same = start + _common_start(memoryview(held)[start:], memoryview(new)[start:])
    if len(held) > len(before):
        return same == len(held)  # (the start of the new bytes alone)
    return held[same:] == before[same:]


def _common_start(one, two):
    """How many bytes `one` and `two` start with in common."""
    one, two = memoryview(one), memoryview(two)  # (slices without copies)
    low, high = 0, min(len(one), len(two))
    while low < high:  # (the longest equal start, found by halves: slices compare in C)
        middle = (low + high + 1) // 2
        if one[:middle] == two[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _remove_folders(folders, root=None):
    """Folders a failed or undone call created, the last first (they are listed outermost first),
    those that are empty; never `root` or a folder outside it (a record read from disk names them)."""
    for folder in reversed(folders if isinstance(folders, list) else []):
        if not isinstance(folder, str) or (root and (folder == root or not is_inside(folder, root))):
            continue
        with _suppress_os():  # (one the killed call never made, or one that holds a file now)
            os.rmdir(folder)


def _undo_file(ctx, fc, applied):
    """_undo_entry of one file of this process's commit; `applied`: the paths whose rename,
    deletion or in-place write was made or begun (a file not yet written was not changed by this
    call: one gone or changed now was so by another program, and stays so)."""
    fc.place = _reopened(ctx, fc.place)
    before = fc.raw if fc.how == "in_place" else None
    touched = applied is None or fc.how == "create" or fc.real in applied
    if fc.place.pending:  # (its folder was never made: nothing of it exists)
        return None
    return _undo_entry(fc.place.folder, fc.place.name, fc.entry(), before, prepared=touched)


def _undo_files(ctx, files, applied=None):
    """Undo every prepared or applied file of a commit that did not reach its commit point; the
    errors of files that could not be put back (their kept names and copies stay, and so does the
    commit record, so the next call finishes the undo), and (path, why) of each one left as it
    is because another program wrote into it since (its old text kept, where `why` says)."""
    errors, left = [], []
    for fc in reversed(files):
        _LIVE_TEMPS.pop(id(fc), None)
        try:
            why = _undo_file(ctx, fc, applied)
        except (OSError, ToolError) as exc:
            if applied is not None and fc.how != "create" and fc.real not in applied:
                continue  # (its name was never touched: only a temporary is left, for a later sweep)
            errors.append(_restore_failed(ctx, fc, exc))
            continue
        if fc.how == "in_place" and fc.keep:
            _drop_copy(fc.keep)  # (one left was moved to kept/ first: its new bytes and marks go)
        if why:
            left.append((fc.real, why))
            continue
        _remove_folders(fc.place.created)
        if len(files) > _OPEN_FOLDERS:
            fc.place.release()
    return errors, left


def _restore_failed(ctx, fc, exc):
    """IO for a file an undo could not put back, with what stopped it; the hint says to raise the
    descriptor limit (ulimit -n) when that was it."""
    if isinstance(exc, ToolError):
        descriptors, detail = exc.hint_key == "io_descriptors.hint", exc.to_dict(ctx.lang)["message"]
    else:
        descriptors, detail = _out_of_descriptors(exc), exc.strerror or str(exc)
    hint = "io_descriptors_restore.hint" if descriptors else None
    return ToolError("IO", "restore_failed", hint, path=fc.real, detail=detail)


def commit_files(ctx, tool, files, summary=None, snapshot=True, rolls_back=None, must_keep=False):
    """Write `files` (FileCommit) all or nothing through the journal; returns (event_id, warnings).
    `snapshot`: record one snapshot event holding every file's old bytes (not for a rollback).
    `rolls_back`: the snapshot records a rollback undoes; they are removed right after the commit
    point, and the record names their events, so a call killed before that finishes it.
    `must_keep`: the snapshot is the only copy of what the files held (a forced rollback): where it
    cannot be kept, nothing is written."""
    _refuse_state_files(ctx, files)
    _guard_signals()
    files = sorted(files, key=lambda fc: (fc.how == "in_place", fc.real))  # in-place writes last
    event = _EventSnapshots(ctx, tool, summary, [fc.real for fc in files], must_keep) if snapshot else None
    run = _CommitRun(ctx, files, {"rolls_back": [r["event_id"] for r in rolls_back]} if rolls_back else {})
    _Faults.arm()
    _SIGNAL_STATE["commit"] = 1  # a signal from here on unwinds through the undo below
    try:
        event_id, warnings, done = run.through_commit_point(event, tool)
    except BaseException as exc:
        _unwind(run, exc, event)
        raise
    _SIGNAL_STATE["commit"] = 2  # (past the commit point: a signal waits until the kept names are gone)
    try:
        for record in rolls_back or []:
            SnapshotStore(ctx).remove(record)
        cleaned = _clean_kept(ctx, files)  # (its steps are injection points too: the next call finishes)
        if event:
            event.seal()  # (once the kept names are gone: a .bin with another name is another program's)
            warnings = warnings + event.tidy()  # (the bounds: evicted now that the change stands)
            event_id = event.event_id
        if done is not None:
            run.journal.finish(*done, cleaned)
    finally:
        _end_of_commit((ctx.lang, event_id))
    _Faults.point("committed")
    return event_id, warnings


_STATE_FOLDERS = ("snapshots", "chips", "locks", "journal", "scans", "kept")  # in BASE (docs/behaviour.md)


def _refuse_state_files(ctx, files):
    """SANDBOX for a file among this tool's own state (BASE/snapshots/...): a root that holds the
    cache (a server started in the home folder) let a call write over the snapshots that its
    rollback needs."""
    base = os.path.realpath(ctx.cache_base)
    for fc in files:
        if any(is_inside(fc.real, os.path.join(base, name)) for name in _STATE_FOLDERS):
            raise ToolError("SANDBOX", "sandbox_state", file=fc.file, base=base)


def _say_dying(said):
    """`said` on stderr, flushed, before the process dies by a signal; nothing when stderr is closed."""
    try:
        _print_error(f"{PROGRAM}: {said}")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # (stderr closed: nothing to say it on)
        pass


def _unwind(run, exc, event):
    """A commit failed (or a signal came) before its commit point: every file back, then die by
    the signal if one came, else raise what to tell (returns when that is `exc` itself)."""
    state = _SIGNAL_STATE
    state["commit"] = 2  # a second signal waits until the files are back
    _Faults.armed = False
    _Faults.report()
    error = run.undo(exc, event)
    state["commit"] = 0
    pending, state["pending"] = state["pending"], None
    if isinstance(exc, _Interrupted) or pending:
        _say_undone(run.ctx.lang, pending or exc.signum, error if error is not exc else None)
        _die_by(pending or exc.signum)
    if error is not exc:
        raise error from None


def _say_undone(lang, signum, error):
    """On stderr, that a commit a signal stopped before its commit point was undone (or what its
    undo left, `error`), as _say_stood says a commit past it stands: the process dies by the
    signal, and its output, which would have said so, never comes."""
    import signal

    name = signal.Signals(signum).name
    if isinstance(error, ToolError):
        said = tr(lang, "undone_signal_left", signal=name, detail=error.to_dict(lang)["message"])
    else:
        said = tr(lang, "undone_signal", signal=name)
    _say_dying(said)


def _end_of_commit(stood=None):
    """After a commit: fault injection off, and a signal that came while it ran acted on. `stood`:
    (language, event id) of a commit past its commit point: dying, it says on stderr that the
    change stands, as the output that never comes would have (every change of a batch whose
    reply is not out yet: found by an attack, it named the last one only)."""
    _Faults.armed = False
    _Faults.report()
    if stood:  # (first: until the call's result is out, _result_is_out)
        _SIGNAL_STATE["stood"].append(stood)
    _SIGNAL_STATE["commit"] = 0
    pending, _SIGNAL_STATE["pending"] = _SIGNAL_STATE["pending"], None
    if pending:
        _say_stood(pending)
        _die_by(pending)


def _say_stood(signum):
    """On stderr, that the changes not yet said (language, event id) stand although the process
    dies by `signum` before its output: the output that never comes would have said so."""
    import signal

    _say_it_stands(("stood_signal", "stood_signal_no_event"), signal=signal.Signals(signum).name)


def _say_unsent(detail):
    """On stderr, that the changes of this call stand although its result could not be written
    (the pipe to the client or the script was closed): a retry would make them twice."""
    _say_it_stands(("stood_unsent", "stood_unsent_no_event"), detail=detail)


def _say_it_stands(keys, **fields):
    """On stderr, of each change not yet said (language, event id): keys[0], or keys[1] for a
    change without an event (a rollback: nothing to roll back)."""
    for lang, event_id in _SIGNAL_STATE["stood"]:
        _say_dying(tr(lang, keys[0] if event_id else keys[1], event_id=event_id, **fields))
    _SIGNAL_STATE["stood"] = []


def _result_is_out():
    """The result of the call is written: a signal from now on has nothing more to say."""
    _SIGNAL_STATE["stood"] = []


class _CommitRun:
    """The steps of one commit_files() call and what they made, for the undo."""

    def __init__(self, ctx, files, header=None):
        self.ctx, self.files, self.journal, self.header = ctx, files, Journal(ctx), header or {}
        self.many = len(files) > _OPEN_FOLDERS  # (folders closed between steps: bounded descriptors)
        self.record, self.warnings, self.applied, self.current, self.writing = None, [], [], None, None
        self.recorded = True  # False when the state directory cannot hold a record at all
        self.tool = None  # (the call's tool, once prepared: a rollback's conflict says so)

    def through_commit_point(self, event, tool):
        """Prepare, apply, record the snapshots, reach the commit point: (event id, warnings,
        the committed record for Journal.finish or None)."""
        self.prepare(event, tool)
        event_id = event.event_id if event else None
        self.apply(event_id, tool)
        warnings = self.warnings + (event.commit(self.files) if event else [])
        event_id = event.event_id if event else None  # (None when its snapshot could not be kept whole)
        done = None
        if self.record is not None:
            done = self.journal.commit(*self.record)  # the commit point
            self.record = None
        return event_id, warnings, done

    def _each(self):
        for fc in self.files:
            self.current = fc
            fc.place = _reopened(self.ctx, fc.place)
            yield fc
            if self.many:
                fc.place.release()

    def prepare(self, event, tool):
        self.id, self.tool = os.urandom(6).hex(), tool
        try:
            _private_dir(self.journal.dir)
        except OSError as exc:  # no cache: the commit is still undone on failure, not after a kill
            self._unrecorded(exc)
        _Faults.point("journal")
        for number, fc in enumerate(self.files):
            copy = f"{os.getpid()}-{self.id[:8]}-{number}.copy"
            fc.name_parts(os.path.join(self.journal.dir, copy) if self.recorded else None)
        if self.recorded:
            self._write_intent(tool)
        for fc in self._each():
            _prepare_or_conflict(self.ctx, fc)
            if event:
                event.keep(fc)
            if fc.check and not _still_same(fc.place, fc.st, fc.raw):
                raise ToolError("CONFLICT", "conflict", file=fc.file)
        self.current = None

    def _write_intent(self, tool):
        """The intent record; a cache too full or read-only for it is met as one whose folder
        cannot be made: the commit goes on unrecorded, undone on failure but not after a kill."""
        self.current = "journal"
        try:
            self.record = self.journal.write(self.id, dict(self.header, tool=tool), self.files, sync=False)
        except OSError as exc:
            self._unrecorded(exc)
            for fc in self.files:
                fc.name_parts(None)

    def _unrecorded(self, exc):
        """The commit goes on without a record (`exc`: why none can be kept), said in a warning;
        unless it writes a file in place (a hard-linked one): killed during that write, the file
        would be left cut, and its old bytes are kept only in the journal. Nothing is changed yet."""
        detail = _os_detail(exc, self.journal.dir)
        for fc in self.files:
            if fc.how == "in_place":
                raise ToolError("IO", "journal_in_place", file=fc.file, detail=detail)
        self.recorded = False
        self.warnings.append(("w.journal_unusable", {"detail": detail}))

    def apply(self, event_id, tool):
        if self.recorded:
            self.current = "journal"
            intent = self.record
            self.record = self.journal.write(
                self.id, dict(self.header, tool=tool, event_id=event_id), self.files, sync=True
            )
            os.close(intent[1])  # (its lock went with the name the prepared record replaced)
        folders = {}
        for fc in self._each():
            if fc.check and not _same_signature(fc.place, fc.st):  # (saved by another program since prepare)
                raise ToolError("CONFLICT", "conflict", file=fc.file)
            if _folder_moved(fc.place):
                raise ToolError("CONFLICT", "folder_moved", file=fc.file)
            self.writing = fc.real  # (an in-place write that fails may leave part of its bytes)
            try:
                _apply_file(fc)
            except (FileNotFoundError, _NotApplied):  # (moved away, deleted or saved by another
                self.writing = None  # program since the last check: its undo leaves it as it is)
                raise ToolError("CONFLICT", "conflict", file=fc.file) from None
            self.applied.append(fc.real)
            _Faults.point("applied")
            if fc.how == "in_place":
                self.warnings.append(_in_place_warning(fc))
            folders.setdefault(fc.place.folder.path, fc.place.folder)
        for path, folder in sorted(folders.items()):
            try:
                _fsync_folder_strict(path, folder)
            except OSError as exc:  # (named by the folder, not by the last file written)
                raise os_error(exc, path) from None
        self._files_as_committed()
        self.current = "journal"

    def _files_as_committed(self):
        """CONFLICT (the commit is then undone: what is ours goes back, what another program saved
        stays) when, once every file is in place and its folder synced, an old file a rename
        replaced or a delete removed was written since it was read, or a name the commit filled
        holds another file now (an editor's save by rename over it)."""
        for fc in self._each():
            if fc.how in ("rename", "delete") and not _old_as_read(fc):
                raise ToolError("CONFLICT", "conflict", file=fc.file)
            if fc.how in ("rename", "create") and _identity_of(fc.place.folder, fc.place.name) != fc.new_id:
                raise ToolError("CONFLICT", "conflict", file=fc.file)

    def undo(self, exc, event):
        """Put every file back; returns the error to raise (`exc` itself when it says it all)."""
        errors, left = _undo_files(self.ctx, self.files, {*self.applied, self.writing})
        if event:
            event.discard()
        if self.record is not None:  # kept when a file could not be put back: the next call retries
            dying = isinstance(exc, _Interrupted)  # (a signal's death says nothing: the next call says it)
            self.journal.drop(*self.record, keep=bool(errors or (left and dying)))
        return errors[0] if errors else self._failure(exc, left)

    def _failure(self, exc, left):
        """The error of a call whose files were put back, except those `left` ((path, why))."""
        exc = _undo_left(self.ctx, self._said(exc), left)
        if isinstance(exc, ToolError) and len(self.files) > 1:
            exc.data["restored"] = [path for path in self.applied if path not in dict(left)]
        return exc

    def _said(self, exc):
        """`exc` as the call's error: an OSError named by the file it was about, a rollback's
        conflict as a rollback's."""
        if isinstance(exc, OSError):
            where = self.current.real if isinstance(self.current, FileCommit) else None
            return os_error(exc, where or self.journal.dir)
        if isinstance(exc, ToolError) and exc.key == "conflict" and self.tool == "rollback":
            return ToolError("CONFLICT", "conflict_rollback", **exc.fields)
        return exc


def _old_as_read(fc):
    """Whether the old file a rename replaced (or a delete removed), now under its kept name alone,
    still is what was read: another program that saved into it in place after the last check,
    before the rename (an editor writing through the file it holds open), would have lost that
    save without a word. True where it cannot tell (the kept name is a copy: a filesystem without
    hard links; a save by rename over the name, or one keeping size and mtime)."""
    try:
        st = fc.place.folder.lstat(fc.keep)
    except OSError:
        return True
    return _identity(st) != _identity(fc.st) or file_signature(st) == file_signature(fc.st)


def _undo_left(ctx, exc, left):
    """CONFLICT for a failed call whose undo left files as another program wrote them since
    (`left`: (path, why) of each), saying what failed (`exc`) and naming them; else `exc`."""
    if not left:
        return exc
    if isinstance(exc, ToolError):  # (a conflict's own words end "nothing was written": not so here)
        key = "conflict_cause" if exc.key == "conflict" else exc.key
        cause = ToolError(exc.code, key, **exc.fields).to_dict(ctx.lang)["message"]
    elif isinstance(exc, _Interrupted):  # (its str() is the signal's number: "failed (15)")
        import signal

        cause = tr(ctx.lang, "cause_signal", signal=signal.Signals(exc.signum).name)
    else:
        cause = str(exc)
    paths, whys = ", ".join(path for path, _why in left), "; ".join(why for _path, why in left)
    return ToolError("CONFLICT", "undo_left", path=paths, why=whys, cause=cause)


def _in_place_warning(fc):
    """The warning of a file written into its own inode, saying why (written_in_place())."""
    if fc.st.st_nlink > 1:
        key = "w.hardlinks_rooted" if fc.place.confined else "w.hardlinks"
        return (key, {"path": fc.real, "count": fc.st.st_nlink})
    if _rename_refused(fc.place, fc.st):
        return ("w.sticky_folder", {"path": fc.real})
    if _owned_by_another(fc.st):
        return ("w.other_owner", {"path": fc.real, "uid": fc.st.st_uid})
    return ("w.mount_point", {"path": fc.real})


def _clean_kept(ctx, files):
    """After the commit point: the kept old names and copies go (the snapshot has its own);
    False if one could not be removed (the record stays, and the next call removes it)."""
    cleaned = True
    for fc in files:
        try:
            fc.place = _reopened(ctx, fc.place)
            if fc.how in ("rename", "delete"):
                _Faults.step("unlink")
                fc.place.folder.delete(fc.keep)
            elif fc.how == "in_place" and fc.keep:
                _Faults.step("unlink")
                os.unlink(fc.keep)
                _drop_copy(fc.keep)  # (its new bytes, and its mark if a failure during the write left it)
        except (OSError, ToolError):
            cleaned = False
        if len(files) > _OPEN_FOLDERS:
            fc.place.release()
    return cleaned


_OPEN_FOLDERS = 32  # a commit of more files closes each folder between steps (bounded descriptors)


def _reopened(ctx, place):
    """`place` itself, or, once released, the same path walked again (docs/behaviour.md#writing-safely)."""
    if not place.released:
        return place
    again = locate(ctx, place.real)
    if again.real != place.real:
        again.folder.close()
        raise ToolError("CONFLICT", "conflict", file=place.file)
    again.file, again.created = place.file, place.created
    return again


def _not_saved(ctx, exc):
    """The warning of a snapshot the cache could not take: a server still holds it in memory, a CLI
    process has none left."""
    detail = _os_detail(exc, ctx.store_dir("snapshots"))
    return ("w.snapshot_not_saved" if ctx.mcp else "w.snapshot_lost", {"detail": detail})


class _EventSnapshots:
    """The snapshot event of one commit: every file's old bytes, kept as the files are prepared.
    If the cache cannot take them, the event is kept in this process's memory for the rest of the
    session, and every later edit says so."""

    def __init__(self, ctx, tool, summary, files, must_keep=False):
        self.ctx, self.tool, self.summary, self.must_keep = ctx, tool, summary, must_keep
        self.files = files if len(files) > 1 else None
        self.store, self.pendings, self.kept, self.warnings = SnapshotStore(ctx), [], [], []
        self.digests = {}  # the new bytes' SHA-256, hashed beside the write when someone can use it
        self.event_id = None
        self.busy = False  # the store was held by another process past the lock wait: no snapshot
        if ctx.persist_failure:
            key = "w.snapshots_in_memory" if ctx.mcp else "w.snapshot_lost"
            self.warnings.append((key, {"detail": ctx.persist_failure}))

    def keep(self, fc):
        self.kept.append(fc)
        if self.busy:
            return
        if fc.payload is not None and (self.ctx.persist_snapshots or self.ctx.mcp):
            self.digests[id(fc)] = payload_digest(fc.payload)
        try:
            self._prepare(fc)
        except LockBusy as exc:
            self._busy(exc)
        except OSError as exc:  # the edit goes on; only its rollback by another process is lost
            self.discard()
            self.warnings.append(_not_saved(self.ctx, exc))
            self.ctx.persist_snapshots, self.ctx.persist_failure = False, exc.strerror or str(exc)
            self.store, self.pendings = SnapshotStore(self.ctx), []
            for kept in self.kept:
                self._prepare(kept)
        if self.must_keep:
            self._kept_or_refused()

    def _kept_or_refused(self):
        """Nothing when this event will be kept; else the error that refuses the commit (must_keep:
        the files' bytes it holds are nowhere else), raised before the commit point."""
        detail = None
        if self.busy:
            detail = self.warnings[-1][1]["detail"]
        elif not self.ctx.persist_snapshots and not self.ctx.mcp:
            detail = self.ctx.persist_failure or "the snapshots are not kept"
        else:
            size = sum(p["before_size"] for p in self.pendings)
            if size > SNAPSHOT_TOTAL_BYTES:
                mib, limit = -(-size // (1 << 20)), SNAPSHOT_TOTAL_BYTES >> 20
                raise ToolError(
                    "TOO_LARGE",
                    "rollback_not_kept",
                    detail=f"{mib} MiB, more than the snapshots hold ({limit} MiB)",
                )
        if detail is not None:
            raise ToolError("CONFLICT" if self.busy else "IO", "rollback_not_kept", detail=detail)

    def _prepare(self, fc):
        after = self.pendings[-1].get("seq") if self.pendings else None
        pending = self.store.prepare(
            fc.place, fc.raw, fc.st, self.tool, self.summary, self.event_id, self.files, after
        )
        self.pendings.append(pending)
        self.event_id = pending["event_id"]

    def _busy(self, exc):
        """Another process held the store past the lock wait: this event keeps no snapshot (the
        edit goes on), and the next one uses the store again (a busy lock is no broken cache)."""
        self.discard()
        self.busy, self.pendings, self.event_id = True, [], None
        self.warnings.append(("w.snapshot_lost", {"detail": f"{exc.strerror}: {self.store.dir}"}))

    def commit(self, files):
        warnings = self.warnings
        if self.busy:
            return warnings
        try:
            said = self.store.commit(
                self.pendings, [functools.partial(self._after_sha256, fc) for fc in files]
            )
        except LockBusy as exc:
            self._busy(exc)
            if self.must_keep:
                self._kept_or_refused()
            return self.warnings
        if said and self._in_memory(files):
            return warnings + [("w.snapshots_in_memory", said[-1][1])]
        if said and self.must_keep:
            raise ToolError("IO", "rollback_not_kept", detail=said[-1][1].get("detail", "-"))
        if said:  # (w.snapshot_not_saved: the records saved would roll back only their files)
            self.discard()
            self.event_id = None
        return warnings + said

    def tidy(self):
        """Once the edit stands: the store's bounds kept (tidy); returns warnings. An event whose
        old bytes alone are more than the bound is not kept at all: its id is then no handle; nor is
        the id of a CLI process's event not persisted (no memory outlives the command). Not while
        another process holds the store (it was waited for once: the next edit tidies)."""
        if self.busy:
            return []
        said = self.store.tidy()
        if not self.ctx.persist_snapshots and not self.ctx.mcp:
            self.event_id = None
            return said
        if self.event_id is None or not self.pendings or self._still_kept():
            return said
        size = sum(p["before_size"] for p in self.pendings)
        if size > SNAPSHOT_TOTAL_BYTES:
            limit = SNAPSHOT_TOTAL_BYTES >> 20
            said.append(("w.snapshot_too_large", {"mib": -(-size // (1 << 20)), "limit": limit}))
        else:  # (its record went with the store: the cache removed meanwhile)
            said.append(
                _not_saved(self.ctx, FileNotFoundError(2, "No such file or directory", self.store.dir))
            )
        self.event_id = None
        return said

    def _still_kept(self):
        """Whether the store (or the server's memory) still holds this event after tidy()."""
        if not self.ctx.persist_snapshots:
            return self.event_id in {r["event_id"] for r in self.ctx.memory_snapshots}
        return self.event_id in {event_id for _seq, event_id, _base in self.store.entries()}

    def _after_sha256(self, fc):
        """What a snapshot record says its file holds after the edit: "absent", or the SHA-256 of
        the new bytes (hashed beside the write when it could be)."""
        if fc.payload is None:
            return "absent"
        return (self.digests.get(id(fc)) or payload_digest(fc.payload)).hexdigest()

    def _in_memory(self, files):
        """The server's fallback when a snapshot's record could not be written (a full disk): the
        whole event goes to memory, its old bytes read back from the files kept, and the store on
        disk is left for this session. False where no memory outlives the call (the CLI)."""
        if not self.ctx.mcp:
            return False
        try:
            records = [dict(p, _bytes=self.store.before_bytes(p)) for p in self.pendings]
        except (OSError, ToolError):
            return False
        for fc, record in zip(files, records):
            record.pop("_base", None)
            if "after_sha256" not in record:
                record["after_sha256"] = self._after_sha256(fc)
        self.discard()
        self.ctx.persist_snapshots, self.ctx.persist_failure = False, "the snapshot record was not written"
        self.ctx.memory_snapshots.extend(records)
        return True

    def seal(self):
        for pending in self.pendings:
            self.store.seal(pending)

    def discard(self):
        for pending in self.pendings:
            self.store.remove(pending)


def recover_interrupted(ctx):
    """Undo the commits whose process died before their commit point (docs/behaviour.md#journaled-commits),
    those of every workspace (a file is one file to all of them, as its lock is); returns warnings
    naming each. A record still locked belongs to a running call: left alone."""
    warnings = []
    for each in _journal_contexts(ctx):
        warnings += _recover_journal(each, other=each is not ctx)
    return warnings


def _journal_contexts(ctx):
    """`ctx`, then one like it for each other workspace whose journal folder (BASE/journal/WSID)
    is there."""
    yield ctx
    for name in sorted(_listdir(os.path.join(ctx.cache_base, "journal"))):
        if name != ctx.workspace_id and re.fullmatch(r"[0-9a-f]{16}", name):
            yield ctx.altered(_workspace_id=name)


def _recover_journal(ctx, other=False):
    """recover_interrupted() of the journal of `ctx`'s workspace. The empty journal folder of
    an `other` workspace goes: every call reads every workspace's journal, so folders left by
    every workspace ever used would slow each call down (2,000 of them: 26 -> 50 ms for a read).
    A commit that made it meanwhile makes it again (Journal.write)."""
    journal = Journal(ctx)
    warnings = []
    names = sorted(_listdir(journal.dir))
    if other and not names:
        with _suppress_os():  # (only an empty folder goes: a record or copy made meanwhile keeps it)
            os.rmdir(journal.dir)
    _sweep_copies(journal, names)
    for name in names:
        if not name.endswith(_RECORD_ENDINGS):
            continue
        path = os.path.join(journal.dir, name)
        dead = _dead_record(path)
        if dead is None:
            continue
        fd, record = dead
        try:  # (its lock is held until the record is gone)
            warnings += _recover_record(ctx, journal, name, path, record)
        finally:
            os.close(fd)
    return warnings


def _recover_record(ctx, journal, name, path, record):
    """The warnings of one dead writer's record: finished past its commit point, or undone; then
    removed. A record that cannot be removed says so; its undo is said only by the call that put
    files back (every later call finds it again)."""
    put_back = True
    if name.endswith((".done", ".clean")):
        said = _finish_record(ctx, record)
        said = said if name.endswith(".done") else None  # (.clean: its call said it all)
    else:
        said, put_back = _undo_record(ctx, journal, record)
    stuck = _remove_record(path, journal, record)
    return ([said] if said and (put_back or not stuck) else []) + stuck


def _remove_record(path, journal, record):
    """A finished record removed; a warning when it cannot be (a read-only cache): it is found
    again by every call, whose writes to its files are refused until it can go."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        event_id = record.get("event_id") if isinstance(record.get("event_id"), str) else "-"
        fields = {"event_id": event_id, "detail": exc.strerror or str(exc), "folder": journal.dir}
        return [("w.record_stays", fields)]
    with _suppress_os():
        _fsync_folder_strict(journal.dir)
    return []


def _open_record(path):
    """A descriptor of the commit record `path` to lock (read-only where the cache is), or None."""
    flags = _NOFOLLOW | _CLOEXEC | _NONBLOCK | getattr(os, "O_BINARY", 0)
    for mode in (os.O_RDWR, os.O_RDONLY):
        try:
            return os.open(path, mode | flags)
        except OSError as exc:
            if _errno_name(exc) not in ("EROFS", "EACCES", "EPERM"):
                return None
    return None


def _dead_record(path):
    """(descriptor holding its lock, record) of the commit record `path` when its writer is dead;
    None when it runs (its lock is held), or the record is gone or unreadable."""
    fd = _open_record(path)
    if fd is None:
        return None
    try:
        _Faults.point("recover")
        if _lock_record(fd, block=False):
            # the lock holds what was opened: a record renamed over it since (an intent giving way
            # to its prepared record, whose writer closes the intent's lock) is a live call's
            if _identity(os.stat(path, follow_symlinks=False)) == _identity(os.fstat(fd)):
                record = _json_object_in(fd)
                if _record_stale(record, path):
                    fd, dead = None, fd
                    return dead, record
    except (OSError, ValueError, RecursionError):
        pass
    finally:
        if fd is not None:
            os.close(fd)
    return None


_DEAD, _STUCK = "dead", "stuck"


def _commit_in_the_way(ctx, places, recovered):
    """What a call that has just taken the locks of `places` must wait for before it reads them
    (Locks): _DEAD when a writer died (its commit is undone first, or past its commit point its
    clean-up finished; once `recovered`, _STUCK when that failed and its record names one of
    `places`), or the path of a record another process holds that names one of `places`. No
    running call holds a record of a file whose locks this call holds, so that is a recovery
    undoing a dead writer's commit, waiting for these locks; None when nothing is."""
    mine = {place.real for place in places}
    for path in _record_files(ctx):
        dead = _dead_record(path)
        if dead is not None:
            os.close(dead[0])
            if not recovered:
                return _DEAD
            if mine.intersection(_record_paths(path)):
                return _STUCK
        elif mine.intersection(_record_paths(path)):
            return path
    return None


def _record_files(ctx):
    """The commit records in the journals of every workspace (_journal_contexts)."""
    journals = [each.store_dir("journal") for each in _journal_contexts(ctx)]
    return [os.path.join(d, n) for d in journals for n in _listdir(d) if n.endswith(_RECORD_ENDINGS)]


def _record_paths(path):
    """The paths the commit record `path` names; none when it is gone, not yet whole, or this
    process's own (an undo that failed keeps its record for a later call to finish: without
    flock its pid, ours, would make it look like another process's undo in progress)."""
    try:
        record = _read_json_object(path)
        entries = None if record.get("pid") == os.getpid() else record.get("files")
    except (OSError, ValueError, RecursionError, AttributeError):
        return []
    paths = [e.get("path") for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    return [path for path in paths if isinstance(path, str)]


def _wait_for_record(path, deadline, file):
    """Wait until the process holding the commit record `path` lets it go (without flock: a
    moment); past `deadline` (time.monotonic()), CONFLICT naming `file` and that process."""
    import time

    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_BINARY", 0))
    except OSError:
        return
    try:
        if os.name == "nt" or PORTABLE_FALLBACKS:
            time.sleep(0.05)
            return
        waited = _poll_until(lambda: _lock_record(fd, block=False), deadline)
        if waited is not None:
            raise _lock_busy(file, None, waited)
    finally:
        os.close(fd)


def _sweep_copies(journal, names):
    """Copies of in-place files (and record temporaries) whose process died before writing its record."""
    named = None
    for name in names:
        match = re.fullmatch(
            _COPY_NAME + r"(?:\.new)?(?:\.[0-9a-f]{8}\.tmp|\.[wu])?|([0-9]+)\.tmp",
            name.split(".json.")[-1],
        )
        pid = match and (match.group(1) or match.group(2))
        if not pid or _process_alive(int(pid)):
            continue
        if named is None:  # (copies a record names are undone with it)
            named = _named_copies(journal)
        if os.path.join(journal.dir, name) not in named:
            with _suppress_os():
                os.unlink(os.path.join(journal.dir, name))


def _named_copies(journal):
    """The in-place copies the journal's records name, and their marks (_mark_writing)."""
    copies = [e.get("keep") for e in _record_entries(journal) if isinstance(e, dict)]
    marks = ("", ".new", ".w", ".u")
    return {keep + mark for keep in copies if isinstance(keep, str) for mark in marks}


def _record_entries(journal):
    entries = []
    for name in journal.names():
        try:
            entries += _read_json_object(os.path.join(journal.dir, name)).get("files") or []
        except (OSError, ValueError, RecursionError, AttributeError):
            pass
    return entries


def _record_stale(record, path):
    if not isinstance(record.get("files"), list):
        return False
    if os.name == "nt" or PORTABLE_FALLBACKS:  # (no flock: the writer's pid)
        pid = record.get("pid")
        return isinstance(pid, int) and not _process_alive(pid)
    return True


def _unconfined(ctx):
    """`ctx` without its root: a record names real paths this tool wrote (no sandbox to re-apply)."""
    return ctx.altered(root=None)


def _finish_record(ctx, record):
    """A commit killed after its commit point: it stands; its kept names and copies are removed,
    and a rollback's undone events are dropped from the snapshots."""
    bare = _unconfined(ctx)
    entries = [e for e in record["files"] if isinstance(e, dict)]
    for entry in entries:
        _finish_entry(bare, entry)
    undone = _drop_undone_events(ctx, _rolled_back(record))
    if undone:
        return ("w.rollback_completed", {"count": len(entries), "events": ", ".join(dict.fromkeys(undone))})
    return ("w.completed", {"count": len(entries), "event_id": record.get("event_id") or "-"})


_EVENT_ID = _LazyPattern(r"[0-9a-f]{6,12}")  # (a record read from disk names nothing else)


def _rolled_back(record):
    """The ids of the events the rollback a commit record is of undid (none for an edit's)."""
    return [
        one for one in record.get("rolls_back") or [] if isinstance(one, str) and _EVENT_ID.fullmatch(one)
    ]


def _drop_undone_events(ctx, undone):
    """The snapshots of the events a rollback undid (`undone`: _rolled_back) removed; returns those ids."""
    store = SnapshotStore(ctx)
    for event_id in undone:
        store.drop_event(event_id)
    return undone


def _finish_entry(bare, entry):
    """One file of a commit that stands: its in-place copy, or its temporary and kept name, go,
    then the folders a rollback's deletion left empty."""
    keep = entry.get("keep")
    if entry.get("how") == "in_place" and isinstance(keep, str):
        _drop_copy(keep)
        return
    try:
        place = locate(bare, str(entry.get("path")))
    except ToolError:
        return
    with place:
        for name in (entry.get("temp"), keep):
            if isinstance(name, str) and name.startswith("."):
                with _suppress_os():
                    place.folder.delete(name)
    _remove_folders(entry.get("after_folders"))


def _undo_record(ctx, journal, record):
    """Undo one interrupted commit, its files under their locks: (the warning that says so, None
    for a commit killed while preparing: it changed nothing, only what it made is removed; whether
    this undo put a file back, not an earlier one whose record could not be removed)."""
    entries = [e for e in record["files"] if isinstance(e, dict)]
    prepared = record.get("prepared") is True
    bare = _unconfined(ctx)
    places = []
    try:
        _Faults.point("undo")
        missing = _record_places(bare, entries, places, prepared)
        left, put_back = _undo_places(bare, places, prepared)
        left = missing + left
    finally:
        for place, _entry in places:
            place.folder.close()
    _drop_copies_and_folders(entries)
    return _undone_said(ctx, record, entries, left) if prepared else None, put_back > 0


def _undone_said(ctx, record, entries, left):
    """The warning of an undone commit: undone, undone but for files another program changed, or
    (a rollback's) the events it had rolled back stand again."""
    event_id = record.get("event_id")
    if isinstance(event_id, str):
        SnapshotStore(ctx).drop_event(event_id)
    fields = {"count": len(entries), "event_id": event_id or "-"}
    rolled = _rolled_back(record)
    if rolled and not left:
        return ("w.rollback_undone", {"count": len(entries), "events": ", ".join(dict.fromkeys(rolled))})
    if left:
        return ("w.undone_partly", dict(fields, left="; ".join(left)))
    return ("w.undone", fields)


def _drop_copies_and_folders(entries):
    """After an undo: the in-place copies of a record's files, then the folders its call made, the
    deepest first (two files may share a new folder: it goes after both of theirs)."""
    for entry in entries:
        if entry.get("how") == "in_place" and isinstance(entry.get("keep"), str):
            _drop_copy(entry["keep"])
    folders = {f for entry in entries for f in entry.get("folders") or [] if isinstance(f, str)}
    _remove_folders(sorted(folders, key=lambda folder: folder.count(os.sep)))


def _os_detail(exc, path):
    """An OSError's words with the path it met (a cache that is a file or a dangling link said only
    "Not a directory")."""
    return f"{exc.strerror or exc}: {exc.filename or path}"


def _record_places(bare, entries, places, prepared=True):
    """Into `places`: (place, entry) of each file a record names that is still where it says. Of
    more than _OPEN_FOLDERS files each folder is closed until its file's turn, as in the commit
    (an undo needs no more descriptors than the call it undoes). Returns the words for each file
    that stood there and does not now (its folder moved or removed since): left as it is, its old
    text kept where they say. Only a name that is not there (or leads into a loop of links) counts:
    any other error (too few descriptors, a folder it may not search) raises, and the record stays
    for the next call."""
    many, missing = len(entries) > _OPEN_FOLDERS, []
    for entry in entries:
        place = _recorded_place(bare, entry)
        if place is None or place.real != entry.get("path") or place.pending:
            if place is not None:
                place.folder.close()
            missing += _moved_away(entry) if prepared else []
            continue
        if many:
            place.release()
        places.append((place, entry))
    return missing


def _recorded_place(bare, entry):
    """The Place of a file a record names, or None when its name leads nowhere (or into a loop of
    links); any other error raises."""
    try:
        return locate(bare, str(entry.get("path")))
    except ToolError as exc:
        if exc.code != "NOT_FOUND" and exc.hint_key != "io_link_loop.hint":
            raise
        return None


def _moved_away(entry):
    """[words] of a file of a record that is not where it was, and where its old text is kept; []
    for one that never stood there (a file to create, not made)."""
    if not (entry.get("old") or entry.get("new")):
        return []
    return [f"{entry.get('path')} ({_moved_words(entry)})"]


def _moved_words(entry):
    why, keep = "not found where it was: its folder was moved or removed since", entry.get("keep")
    if entry.get("how") == "create":
        return f"{why}; this call created it, and it may stand there still"
    if not isinstance(keep, str):
        return why
    if entry.get("how") != "in_place":
        return f"{why}; its old text may stand beside it as {keep}"
    if not os.path.exists(keep):
        return why
    return why + _keep_old_copy(keep, os.path.basename(str(entry.get("path"))))


def _undo_places(bare, places, prepared):
    """Undo each (place, entry) under the locks of them all; (what was left alone, and why; how
    many files were put back). A file that could not be put back (a full disk, a file-size limit)
    raises, after the others are done: the record and the copies stay, and the next call tries again."""
    left, failed, put_back = [], [], 0
    with Locks(bare, recovering=True) as locks:
        locks.take_all([place for place, _entry in places])
        for n, (_place, entry) in enumerate(places):
            why = _undo_place(bare, places, n, prepared, failed)
            if len(places) > _OPEN_FOLDERS:
                places[n][0].release()
            if why:
                left.append(f"{entry['path']} ({why})")
            put_back += why is None
    if failed:
        raise failed[0]
    return left, put_back


def _undo_place(bare, places, n, prepared, failed):
    """_undo_entry of places[n] (reopened in place); why it was left, or None. A failure to put
    it back goes into `failed`, as an OSError naming the file."""
    place, entry = places[n]
    try:
        place = _reopened(bare, place)
        places[n] = (place, entry)  # (its folder is closed by the caller)
        return _undo_entry(place.folder, place.name, entry, prepared=prepared)
    except ToolError as exc:
        if exc.code == "IO":
            failed.append(OSError(0, f"{entry['path']}: {exc}"))
        return str(exc)
    except OSError as exc:
        failed.append(OSError(exc.errno, f"{entry['path']}: {exc.strerror or exc}"))
        return None


# --- scan memory: the last scan of an edited text, for the next post-edit check ------------------
# (docs/behaviour.md#the-post-edit-balance-check)


class _ScanMemory:
    """The server's memory of the scan of the last edited text (docs/behaviour.md#the-post-edit-balance-check):
    one file, the one an agent is likely to edit again. A text up to SCAN_MEMORY_CHARS is kept and
    compared whole; of a larger one only the SHA-256 of its bytes (and codec) is kept."""

    def __init__(self):
        self.entry = None  # (key, language, text or (codec, SHA-256 of the body), scan)

    def wants_digest(self, key, language, size, after=False):
        """Whether recall (or keep, `after` an edit) of a text of `size` bytes may want its
        _Digest (a text has no more characters than bytes)."""
        if after:
            return size > SCAN_MEMORY_CHARS
        entry = self.entry
        return entry is not None and entry[:2] == (key, language) and not isinstance(entry[2], str)

    def recall(self, key, language, text, old_text, digest):
        entry = self.entry
        if entry is None or entry[:2] != (key, language):
            return None
        if isinstance(entry[2], str):
            return entry[3] if entry[2] == old_text else None
        same = entry[2] == (text.codec, (digest or _Digest([text.body])).hexdigest())
        return entry[3] if same else None

    def keep(self, key, language, text, digest, new_text, scan):
        """Keep `scan`, the scan of `new_text`, whose bytes `digest` (a _Digest, or None) hashes."""
        if len(new_text) <= SCAN_MEMORY_CHARS:
            self.entry = (key, language, new_text, scan)
        else:
            self.entry = None if digest is None else (key, language, (text.codec, digest.hexdigest()), scan)


@functools.cache
def _program_stamp():
    """[version, size, mtime] of this program's file: a scan kept by another build of the
    scanners is never used. The one-file executable is stamped by itself (its module is unpacked
    anew at every start); None, and nothing is kept, when the file cannot be found."""
    try:
        st = os.stat(sys.executable if getattr(sys, "frozen", False) else __file__)
    except (OSError, NameError, TypeError):
        return None
    return [__version__, st.st_size, st.st_mtime_ns]


class _ScanFiles:
    """The CLI's memory of scans between runs: BASE/scans/, one JSON file per edited path (named by
    a hash of it), for texts of SCAN_FILE_MIN_CHARS or more in bracket languages, at most
    SCAN_FILES of them (the oldest go). A file names the SHA-256 of the body it describes: it is
    used only for exactly that body, and a file that does not parse is ignored."""

    def __init__(self, ctx):
        self.ctx = ctx  # the folder is found only for a large text (platformdirs costs an import)

    @property
    def dir(self):
        return os.path.join(self.ctx.cache_base, "scans")

    def _path(self, key):
        return os.path.join(self.dir, _sha256(key.encode("utf-8", "surrogatepass"))[:32] + ".json")

    @staticmethod
    def _takes(language, size):
        return size >= SCAN_FILE_MIN_CHARS and language not in _MARKUP_LANGUAGES and language != "markdown"

    def wants_digest(self, key, language, size, after=False):
        """Whether recall (or keep, `after` an edit) of a text of `size` bytes (or characters) may
        want its _Digest: recall only when a record is there."""
        return self._takes(language, size) and (after or os.path.lexists(self._path(key)))

    def recall(self, key, language, text, old_text, digest):
        if not self._takes(language, len(old_text)):
            return None
        try:
            record = _read_json_object(self._path(key))  # no link followed, no FIFO waited on
            wanted = [1, _program_stamp(), language, text.codec]
            if [record.get(k) for k in ("v", "program", "language", "codec")] != wanted:
                return None
            if record.get("sha256") != (digest or _Digest([text.body])).hexdigest():
                return None
            problems = [(int(p), str(sym), str(kind)) for p, sym, kind in record["problems"]]
            saved = [_saved_of(*one) for one in record["saved"]]
        except (OSError, ValueError, TypeError, KeyError, RecursionError, UnicodeError):
            return None  # no record, or one this run cannot use: the file is scanned
        return _BalanceScan.made(language, problems, saved, None, None)

    def keep(self, key, language, text, digest, new_text, scan):
        """Keep `scan`, the scan of `new_text`, whose bytes `digest` (a _Digest) hashes, for the next run."""
        if not self._takes(language, len(new_text)) or digest is None or _program_stamp() is None:
            return
        import json

        record = {"v": 1, "program": _program_stamp(), "language": language, "codec": text.codec}
        if scan.tags is not None or scan.saved is None or len(scan.problems) > 100_000:
            return  # (a record that large would cost more to read than the scan it saves)
        record["problems"] = scan.problems
        record["saved"] = [(one.pos, one.stack, one.templates, one.problems) for one in scan.saved]
        record["sha256"] = digest.hexdigest()  # (last: the digest was hashed beside all this)
        with _suppress_os():  # a cache that cannot be written only costs the next edit a scan
            _private_dir(self.dir)
            _write_private(self._path(key), json.dumps(record, separators=(",", ":")).encode(), sync=False)
            self._trim()

    def _trim(self):
        """The SCAN_FILES newest records stay; older ones go."""
        names = sorted(
            (entry.stat().st_mtime, entry.path)
            for entry in os.scandir(self.dir)
            if entry.name.endswith(".json")
        )
        for _mtime, path in names[:-SCAN_FILES]:
            os.unlink(path)


def _saved_of(pos, stack, templates, count):
    """A _Saved checkpoint from its JSON form (raises on any value of the wrong type)."""
    return _Saved(
        int(pos),
        tuple((int(at), int(code)) for at, code in stack),
        tuple(int(t) for t in templates),
        int(count),
    )


# ====================================================================================================
# 9. Tools: one handler per tool, and the TOOLS table that the server, the CLI and the docs read
# ====================================================================================================


def _local_warnings(ctx, warnings):
    """Warnings may be strings or (message key, fields) pairs; render them in ctx.lang, in order
    (the CLI's words, KEY.cli, where they name options instead of JSON arguments)."""
    out = []
    for item in warnings:
        if isinstance(item, tuple):
            text = tr(ctx.lang, item[0] if ctx.mcp else _cli_key(item[0]), **item[1])
        else:
            text = item
        if text not in out:
            out.append(text)
    return out


def _sha256(data):
    return _sha256_new(data).hexdigest()


def _head(text):
    """The file's first 512 bytes as text, for a shebang or a modeline (what cannot be decoded goes)."""
    try:
        return text.body[:512].decode(text.codec, "ignore")
    except UnicodeError:  # (a codec without the "ignore" handler: idna)
        return text.body[:512].decode("latin-1")


def _language_of(real, text):
    return detect_language(os.path.basename(real), _head(text))


def _lines_window(text, body, first, last):
    """(text, eol) pairs of lines first..last of `body` (empty when first > last)."""
    if last < first:
        return []
    a, b = line_span(body, first, last)
    return split_decoded(body[a:b].decode(text.codec))


def _lines_addressable(opened):
    """INVALID_ARGUMENT for an edit by line numbers of a file whose lines are broken by CR alone
    (more often than by LF): its lines here hold several of its lines (a replace of "line 1"
    replaced every line up to the first LF)."""
    body = opened.text.body
    if b"\r" in body and _breaks_with_cr(body.count(b"\r") - body.count(b"\r\n"), body.count(b"\n")):
        raise invalid("cr_only_lines", file=opened.file)


def _breaks_with_cr(lone_cr, newlines):
    """Whether a text with `lone_cr` CRs not followed by LF and `newlines` LFs breaks its lines
    with CR alone (classic Mac OS), one LF appended by another editor or not. A text of several
    LF lines is not, however many CRs its lines hold (a log of progress bars: `10%\\r20%\\r…`)."""
    return lone_cr > newlines and newlines <= 1


def _check_range(file, start, end, total):
    if start < 1:
        raise invalid("line_below_one", name="start", value=start)
    if end < start:
        raise invalid("end_before_start", start=start, end=end)
    if total == 0:
        raise ToolError("OUT_OF_RANGE", "empty_file_range", data={"total": 0}, file=file)
    if end > total:
        raise out_of_range(file, start, end, total)


def _edit_range(args, total, file=None):
    """start/end of replace or delete: end defaults to start; a negative end counts from the end
    (whether it did: args["end"] < 0).

    Values that can never be valid are INVALID_ARGUMENT; a negative end that lands before start
    only because this file is short is OUT_OF_RANGE (docs/behaviour.md#line-arguments).
    """
    start = args["start"]
    given = args.get("end", start)
    if given is None or given >= 0:
        if start >= 1 and given is not None and given < start:
            raise invalid("end_before_start", start=start, end=given)
        return start, given
    end = total + 1 + given
    if start >= 1 and end < start:
        raise _end_back_before_start(file, start, given, total)
    return start, end


def _end_back_before_start(file, start, end, total):
    """OUT_OF_RANGE for a negative `end` that counts back to before `start` in this short file."""
    fields = {"file": file, "start": start, "end": end, "total": total}
    return ToolError("OUT_OF_RANGE", "end_back_before_start", "out_of_range.hint", {"total": total}, **fields)


# --- viewed_code_id (docs/behaviour.md#viewed_code_id) --------------------------------------------


def check_view(ctx, args, opened, edit_first, edit_last, now=(False, False), insert=False):
    """(warnings, d): STALE_VIEW when the viewed lines changed; d != 0 when they only moved by d
    lines (docs/behaviour.md#viewed_code_id) and the edit lies inside them: an edit by line numbers
    then goes d lines further. `now` says which of the edit's first and last line are numbers of
    the file as it is now, not as the view saw it: both for edits found by `old` or a target (they
    are already where the text is: checked against the moved lines, not shifted), the last for an
    end counted from the end of the file."""
    token = args.get("viewed_code_id")
    if token is None:  # (an empty one is refused: `--viewed-code-id "$ID"` with ID unset checked nothing)
        return [], 0
    vstart, vend, digest, fingerprint = parse_view_id(token)
    if _view_holds(opened, vstart, vend, digest):
        if fingerprint and fingerprint[3] is not None:
            _copied_since(ctx, token, opened, vstart, vend, fingerprint)
        elif fingerprint is None:
            _shifted_since(ctx, token, opened, vstart, vend)
        return _outside_view(vstart, vend, edit_first, edit_last), 0
    moved = _moved_view(opened, vstart, vend, digest, fingerprint) if vend >= vstart and fingerprint else []
    if _moved_alone(opened.text, (vstart, vend), moved, fingerprint):
        relocated = _relocation((vstart, vend), moved[0] - vstart, (edit_first, edit_last), now, insert)
        if relocated is not None:
            return relocated
        raise _stale_view(ctx, token, opened, vstart, vend, "view_moved_past")
    raise _stale_view(ctx, token, opened, vstart, vend)


def _moved_alone(text, viewed, moved, fingerprint):
    """Whether the one window `moved` found holds the viewed lines moved there: the file has as
    many lines more (or fewer) as they moved by, and the lines around did not stay behind."""
    if len(moved) != 1 or fingerprint[3] != text.total() - (moved[0] - viewed[0]):
        return False
    return not _surroundings_stayed(text, viewed, moved[0], fingerprint[4:6], fingerprint[6:])


def _outside_view(vstart, vend, edit_first, edit_last):
    """The warning of an edit reaching past the lines its view holds (and the line either side)."""
    if edit_first < vstart - 1 or edit_last > vend + 1:
        return [("w.outside_view", {"start": edit_first, "end": edit_last, "vstart": vstart, "vend": vend})]
    return []


def _shifted_since(ctx, token, opened, vstart, vend):
    """STALE_VIEW when lines read while not unique (they stand elsewhere too) still stand where
    they were read in a file whose line count changed, and lines added or removed above may have
    put another copy of them in their place (a pasted copy with its neighbours too): the bytes
    below them stand where such a move puts them (_moved_below, from BEFORE and AFTER in the
    token); where that cannot tell, or in a token without them, no neighbour of theirs (a line
    with a letter or a digit) still stands beside them, or one that does no longer. Where the line
    count is the same, when no such neighbour stays and the same lines stand elsewhere with the
    neighbours they had when read: blocks swapped or moved took the copy read there (neighbours
    that changed with the copy read nowhere else are edits beside the lines read)."""
    marked = _VIEW_NEIGHBOURS.search(token.strip())
    if marked is None:
        return
    if int(marked.group(1)) == opened.text.total():
        viewed, above, below = (vstart, vend), marked.group(2), marked.group(3)
        told = _neighbours_told(opened.text, viewed, above, below)
        if told and not any(told) and _read_copy_elsewhere(opened.text, viewed, above, below):
            raise _stale_view(ctx, token, opened, vstart, vend, "view_reordered")
        return
    lines, crcs = int(marked.group(1)), marked.groups()[3:]
    moved = _moved_below(opened.text, (vstart, vend), lines, crcs) if crcs[0] else None
    if moved is not None:
        if moved:
            raise _stale_view(ctx, token, opened, vstart, vend, "view_shifted")
        return
    if not _neighbours_stayed(opened.text, (vstart, vend), marked.group(2), marked.group(3)):
        raise _stale_view(ctx, token, opened, vstart, vend, "view_shifted")


def _neighbours_stayed(text, viewed, above, below, starts=None):
    """Whether a neighbour of the lines viewed (start, end) with a letter or a digit still stands
    beside them (`above`, `below`: the CRC-32 of the lines around them when read, in hex), and
    none that did no longer does."""
    told = _neighbours_told(text, viewed, above, below, starts)
    return bool(told) and all(told)


def _read_copy_elsewhere(text, viewed, above, below):
    """Whether the lines viewed (start, end) stand at other lines too, beside the neighbours they
    had when read (`above`, `below`: CRC-32 in hex): one with a letter or a digit at least, and
    none that differs."""
    import bisect

    body, (vstart, vend) = text.body, viewed
    a, b = line_span(body, vstart, vend)
    chunk, starts, count = body[a:b], None, vend - vstart + 1
    at = body.find(chunk)
    while at >= 0:
        if at != a and (at == 0 or body[at - 1 : at] == b"\n"):
            starts = starts or _line_starts(body)
            line = bisect.bisect_right(starts, at)  # (1-based: the line that starts at `at`)
            if _beside_old_neighbours(text, starts, (line, line + count - 1), above, below):
                return True
        at = body.find(chunk, at + 1)
    return False


def _beside_old_neighbours(text, starts, lines, above, below):
    """_neighbours_stayed of `lines`, the CRC-32 of a neighbour's bytes looked at first (a copy
    beside none of the old neighbours is passed at once: a file of 250,000 `}` lines)."""
    from zlib import crc32

    view, (first, last) = memoryview(text.body), lines
    for n, crc in ((first - 1, above), (last + 1, below)):
        if 1 <= n < len(starts) and crc32(view[starts[n - 1] : starts[n]]) == int(crc, 16):
            return _neighbours_stayed(text, lines, above, below, starts)
    return False


def _neighbours_told(text, viewed, above, below, starts=None):
    """For each neighbour of the lines viewed that has a letter or a digit now, whether it is the
    one read (_neighbours_stayed; `starts`: _line_starts of the body, when known)."""
    vstart, vend = viewed
    now = [
        (_telling_crc(text, starts, line), int(crc, 16))
        for line, crc in ((vstart - 1, above), (vend + 1, below))
    ]
    return [found == crc for found, crc in now if found is not None]


def _moved_below(text, viewed, lines, crcs):
    """For lines viewed (start, end) that still hash to their view in a file that had `lines`
    lines: whether lines added or removed above them moved the rest down (or up), so that those
    at their place are a copy: the bytes above them changed, and the same lines and every byte
    below them stand where such a move puts them. None when that cannot be told (the caller's
    neighbour rule decides); False when the bytes above them did not change."""
    from zlib import crc32

    body, (vstart, vend), d = text.body, viewed, text.total() - lines
    view, (a, b) = memoryview(body), line_span(body, vstart, vend)
    if crc32(view[:a]) == int(crcs[0], 16):
        return False  # (the count changed below them: they are the lines read)
    if not 1 <= vstart + d <= vend + d <= text.total():
        return None
    c, e = line_span(body, vstart + d, vend + d)
    if view[a:b] == view[c:e] and crc32(view[e:]) == int(crcs[1], 16):
        return True  # (the lines read and all below them stand moved by d)
    return None


def _copied_since(ctx, token, opened, vstart, vend, fingerprint):
    """STALE_VIEW when lines a view saw unique still stand where they were read, but may be a copy
    put there since (lines added or removed above moved the lines read away): in a file whose line
    count changed, when an identical copy of them stands elsewhere now (`view_copied`), or when
    the nearest lines with a letter or a digit above and below them are both others now and the
    one above them when read stands as far from them as the count changed (`view_replaced`: a
    copy of a function added above the one read, which was then edited); in a file of the same
    line count, when the copy stands elsewhere and both those neighbours are others
    (docs/behaviour.md#viewed_code_id)."""
    body, total = opened.text.body, opened.text.total()
    at, stop = line_span(body, vstart, vend)
    copied, d = not view_unique(body, body[at:stop], at), total - fingerprint[3]
    if copied and (d or _neighbours_replaced(body, at, stop, fingerprint[6:8])):
        raise _stale_view(ctx, token, opened, vstart, vend, "view_copied")
    if d and 1 <= vstart + d <= vend + d <= total and _neighbours_replaced(body, at, stop, fingerprint[6:8]):
        a, b = line_span(body, vstart + d, vend + d)
        if _telling_neighbour(body, a, b, True) == fingerprint[6]:
            raise _stale_view(ctx, token, opened, vstart, vend, "view_replaced", moved=f"{d:+d}")


def _neighbours_replaced(body, a, b, nearest):
    """Whether the nearest lines with a letter or a digit above and below body[a:b] are both there
    and both other lines than `nearest`, the CRC-32 of those a view recorded (_telling_neighbour)."""
    now = [_telling_neighbour(body, a, b, up) for up in (True, False)]
    return None not in now and all(found != crc for found, crc in zip(now, nearest))


def _view_holds(opened, vstart, vend, digest):
    """Whether lines vstart..vend of the file still hash to a view's `digest`."""
    body, total = opened.text.body, opened.text.total()
    if vend > total:
        return False
    return view_hash(opened.real, vstart, vend, body[slice(*line_span(body, vstart, vend))], total) == digest


def _stale_view(ctx, token, opened, vstart, vend, key="stale_view", **more):
    """STALE_VIEW for the lines `token` viewed: what they hold now, and, when this server showed
    them, a diff of what it showed against that; `more`: fields of the message `key`."""
    text = opened.text
    current = render_numbered(_lines_window(text, text.body, vstart, min(vend, text.total())), vstart)
    data = {"current": current}
    remembered, read_from = ctx.views.get(token.strip()), ctx.view_files.get(token.strip())
    if read_from is not None and read_from != opened.real:  # (not this file's view at all)
        return ToolError(
            "STALE_VIEW",
            "stale_view_other_file",
            "stale_view_other_file.hint",
            data=data,
            file=opened.file,
            start=vstart,
            end=vend,
            id=token,
            other=read_from,
        )
    if remembered is not None:
        import difflib

        changes = difflib.unified_diff(
            remembered.split("\n"), current.split("\n"), "viewed", "current", lineterm=""
        )
        data["changes"] = "\n".join(changes)
        if remembered == current and key == "stale_view":
            key = "stale_view_unseen"  # (an empty diff said nothing of what changed)
    if vend < vstart and key in ("stale_view", "stale_view_unseen"):  # (a view of an empty file: no lines)
        key = "stale_view_empty"
    fields = {"file": opened.file, "start": vstart, "end": vend, "id": token, "total": text.total(), **more}
    return ToolError("STALE_VIEW", key, "stale_view.hint", data=data, **fields)


def _relocation(viewed, d, edit, now, insert):
    """([w.relocated], d) when the viewed lines moved by d and the edit's lines (first, last) lie
    inside them, else None (the view is stale); each of them is numbered as the view saw the file,
    or as the file is `now`."""
    (low, high), first, last = viewed, edit[0] - d * now[0], edit[1] - d * now[1]
    inside = low - 1 <= first <= high if insert else low <= first and last <= high
    if not inside:
        return None
    fields = {"d": f"{d:+d}", "a": first + d, "b": last + d, "old_a": first, "old_b": last}
    return [("w.relocated", fields)], d


def _view_lines(args, total):
    """The highest line an edit with a viewed_code_id may name before its view is checked: the
    line count the view saw, when it may have moved since, or the file's (`total`)."""
    seen = _view_total(args.get("viewed_code_id"))
    return total if seen is None else max(total, seen)


def _view_total(token):
    """The line count of the file a view was read from, as its token keeps it (a unique view's
    fingerprint, or the `:n` mark of one that stands elsewhere too); None for none or an old token."""
    if token is None:
        return None
    fingerprint = parse_view_id(token)[3]
    if fingerprint:
        return fingerprint[3]
    marked = _VIEW_NEIGHBOURS.search(token.strip())
    return int(marked.group(1)) if marked else None


def _end_still_meant(ctx, args, opened, d):
    """STALE_VIEW for an edit with a view whose end is counted from the end of the file (end -1)
    when lines were added or removed below the viewed ones since (more than the view moved by,
    d): the end names another line than when they were read (end -1 deleted a line appended
    since, which nobody had read). An insert at the end (after_line -1) loses nothing: it goes
    after them."""
    token, total = args.get("viewed_code_id"), opened.text.total()
    seen = _view_total(token)
    if seen is not None and total - seen != d:
        vstart, vend = parse_view_id(token)[:2]
        raise _stale_view(ctx, token, opened, vstart, vend, "view_end_moved")


def _viewed_lines(ctx, args, opened, start, end, located):
    """(start, end, warnings, d) of an edit of lines start..end checked against its view: numbers
    of a view that has since moved by d lines go d lines further, except those of the file as it
    is now (a `located` range, an end counted from the end); OUT_OF_RANGE when they fall outside."""
    file, total = opened.file, opened.text.total()
    from_end = not located and (args.get("end") or 0) < 0
    _check_range(file, start, end, total if located else _view_lines(args, total))
    warnings, d = check_view(ctx, args, opened, start, end, now=(located, located or from_end))
    if from_end:
        _end_still_meant(ctx, args, opened, d)
    if d and not located:
        start, end = start + d, end + (0 if from_end else d)
    _check_range(file, start, end, total)
    return start, end, warnings, d


def _changed_in_place(now, then):
    """The index of the first or the last line of `then` (one with a letter or a digit) that `now`,
    the lines where `then` was expected, still holds in its place, when more than half of the lines
    of `then` stand in their places too; else None. Those lines were then changed there, not moved,
    and the same lines elsewhere are another copy (docs/behaviour.md#viewed_code_id).

    >>> _changed_in_place(["def f():", "    x = 2", "    return x"], ["def f():", "    x = 1", "    return x"])
    0
    >>> _changed_in_place(["try:", "    y = g()"], ["try:", "    x = f()"]) is None  # (only a common line)
    True
    """
    same = [i < len(now) and now[i].rstrip() == line.rstrip() for i, line in enumerate(then)]
    if 2 * sum(same) <= len(then):
        return None
    return next((i for i in (0, len(then) - 1) if same[i] and _ALNUM_TEXT.search(then[i])), None)


def _moved_view(opened, vstart, vend, digest, fingerprint):
    """First lines of the windows of the viewed size whose bytes give the token's hash (at most two
    are looked for: one means the block moved). Only windows of the viewed lines' byte size whose
    first line has the token's CRC-32 are hashed (the token's fingerprint), so the search costs one
    pass over the line starts. None found when an edge line, or most lines, still stand where they
    were read."""
    text, count = opened.text, vend - vstart + 1
    body = text.body
    starts = _line_starts(body)
    lines = len(starts) - 1
    if not body or count > lines:
        return []
    first_crc, last_crc = fingerprint[1:3]
    if _edge_stands(text, starts, ((vstart, first_crc), (vend, last_crc))):
        return []
    prefix = _sha256_new(f"{opened.real}\0{vstart}\0{vend}\0".encode("utf-8", "surrogatepass"))
    found = _hashed_windows(body, starts, count, vstart, fingerprint, prefix, digest)
    if len(found) == 1 and _mostly_in_place(text, starts, vstart, found[0], count):
        return []
    return found


def _hashed_windows(body, starts, count, vstart, fingerprint, prefix, digest):
    """First lines (at most two) of the windows of `count` lines other than `vstart` whose size and
    first line's CRC-32 are the fingerprint's and whose bytes, hashed after `prefix`, give `digest`."""
    from zlib import crc32

    size, first_crc = fingerprint[:2]
    view, found = memoryview(body), []
    for line, (a, b) in enumerate(zip(starts, starts[count:]), 1):
        if b - a != size or line == vstart or crc32(view[a : starts[line]]) != first_crc:
            continue
        digest_now = prefix.copy()
        digest_now.update(view[a:b])
        if digest_now.hexdigest()[:16] == digest:
            found.append(line)
            if len(found) > 1:
                break
    return found


def _mostly_in_place(text, starts, vstart, moved, count):
    """Whether more than half of the viewed lines with a letter or a digit (the window at `moved`
    holds the viewed bytes) stand where they were read, at lines `vstart`...: the lines were then
    changed there, even at both edge lines, not moved (docs/behaviour.md#viewed_code_id)."""
    last = len(starts) - 1  # (the viewed lines may now reach past the end)
    now, then = (
        text.decode(starts[min(at - 1, last)], starts[min(at - 1 + count, last)]).split("\n")
        for at in (vstart, moved)
    )
    telling = [i for i in range(count) if _ALNUM_TEXT.search(then[i])]
    standing = sum(i < len(now) and now[i].rstrip() == then[i].rstrip() for i in telling)
    return 2 * standing > len(telling) > 0


def _surroundings_stayed(text, viewed, moved, around, nearest):
    """Whether the lines that stood around the viewed ones (`around`: the CRC-32 of the line above
    and of the line below, None in older tokens) still stand around their old place and not
    around the copy at line `moved`: the lines read were then rewritten where they stood and a copy
    of their old text was made since, with as many lines as it moved by (a function kept as
    `legacy()` right below its new version). Lines without a letter or a digit tell nothing; where
    they stood around, the nearest lines that have one (`nearest`, _telling_neighbour) tell when
    both still stand by the old place and neither by the copy."""
    body, starts = text.body, _line_starts(text.body)
    count, last = viewed[1] - viewed[0] + 1, len(starts) - 1

    def next_to(first, up):
        return _telling_crc(text, starts, first - 1 if up else first + count)

    def bounds(first):  # (the bytes of the `count` lines from line `first`)
        return starts[min(first, last + 1) - 1], starts[min(first + count, last + 1) - 1]

    def near(first, up):
        return _telling_neighbour(body, *bounds(first), up)

    def told(crc_of, crcs):  # (per side that tells: it stands by the old place, by the copy)
        return [(crc_of(viewed[0], up) == crc, crc_of(moved, up) == crc) for crc, up in crcs]

    adjacent = told(next_to, [(crc, up) for crc, up in zip(around, (True, False)) if crc is not None])
    nearby = told(near, zip(nearest, (True, False))) if None not in nearest else []
    # (a side with no line with a letter or a digit near it when read, as now by the window, and
    # the same line next to it, or none: the file's edge, or blank lines at its end went along)
    edge = any(
        then == now == near_then and near(moved, up) is None
        for then, near_then, now, up in zip(
            around, nearest, _around_crcs(body, *bounds(moved)), (True, False)
        )
    )
    return _stayed_behind(adjacent, nearby, edge)


def _stayed_behind(adjacent, nearby, edge):
    """_surroundings_stayed's verdict from the lines around, told (stands by the old place, stands
    by the window): the line above and below (`adjacent`), the nearest ones with a letter or a
    digit (`nearby`), and whether the file's edge went along (`edge`)."""
    if _left_behind(adjacent):
        return True
    # (the nearest ones only when both tell, both by the old place: a function added right above
    # the last one of a file, nothing below it, moves it; one side alone refused 6 % of such moves)
    if nearby and all(old and not new for old, new in nearby):
        return True
    # (and when none of them went along with the window, wherever the old place went: a copy made
    # above or below, the lines read rewritten where they stood, and lines deleted or added so that
    # the count matched the move. It refuses a block moved while the lines around it were edited
    # too: safe, and a copy was found in 296 of 300 of the mirror attack below; docs/decisions.md)
    return bool(adjacent) and not edge and not any(new for _old, new in adjacent + nearby)


def _left_behind(told):
    """For neighbours told (stands by the old place, stands by the window found): whether one
    stayed by the old place and none went along with the window."""
    return any(old and not new for old, new in told) and not any(new and not old for old, new in told)


def _edge_stands(text, starts, edges):
    """Whether one of the viewed edge lines, (line number, CRC-32 or None), still stands where it
    was read: the lines were then changed there, not moved, and an identical copy elsewhere, made
    since the read, is another block (docs/behaviour.md#viewed_code_id)."""
    return any(crc is not None and _telling_crc(text, starts, line) == crc for line, crc in edges)


def _telling_crc(text, starts, line):
    """The CRC-32 of line `line` (1-based; `starts`: _line_starts of the body, or None to find the
    line by the body's line index: one line, no pass over every line), or None when there is no
    such line or it has no letter or digit (blank, `}`: it tells nothing of where it is)."""
    from zlib import crc32

    if starts is None:
        if not 1 <= line <= text.total():
            return None
        a, b = line_span(text.body, line, line)
    elif not 1 <= line < len(starts):
        return None
    else:
        a, b = starts[line - 1], starts[line]
    return crc32(memoryview(text.body)[a:b]) if _ALNUM_TEXT.search(text.decode(a, b)) else None


def _line_starts(body):
    """The offset of every line of `body` (bytes or text), and its length (the end of the last line)."""
    starts, newline = [0], b"\n" if isinstance(body, bytes) else "\n"
    find, pos = body.find, 0
    while True:
        pos = find(newline, pos) + 1
        if not pos:
            break
        starts.append(pos)
    if starts[-1] != len(body):
        starts.append(len(body))
    return starts


# --- targets (docs/behaviour.md#line-arguments) ---------------------------------------------------


NEAREST_NAMES = 10  # how many names a target that is not found lists


def _nearest(names, value):
    """Up to NEAREST_NAMES distinct names, the most like `value` first (ties in file order)."""
    import difflib

    wanted = str(value).casefold()
    unique = list(dict.fromkeys(names))
    ranked = sorted(unique, key=lambda n: -difflib.SequenceMatcher(None, wanted, n.casefold()).ratio())
    return ranked[:NEAREST_NAMES]


def resolve_target(ctx, opened, target, warnings=None):
    """(start, end) of a target {kind, value, occurrence} (docs/behaviour.md#line-arguments).
    With `warnings` (a read), a function defined several times is the first, said in a warning;
    an edit gets AMBIGUOUS instead."""
    file, text = opened.file, opened.text
    kind, value, occurrence = target["kind"], target["value"], target.get("occurrence")
    if kind == "line":
        try:
            line = _as_int("target.value", value)
        except ToolError:
            raise invalid("target_line_bad", value=_clip(str(value))) from None
        if line < 1:
            raise invalid("target_line_below_one", value=_clip(str(value)))  # (as given: `-0`, not 0)
        _check_range(file, line, line, text.total())
        return line, line
    if kind == "marker":
        spans = _marker_spans(file, text, value)
        return spans[_one_of(file, kind, str(value), occurrence, spans)]
    return _named_span(opened, kind, str(value), occurrence, warnings)


def _marker_spans(file, text, value):
    """(line, line) of every line holding the marker `value`."""
    if not value:
        raise invalid("target_bad", got=repr(value))
    value = str(value)
    lines = [n for n, (line, _eol) in enumerate(split_decoded(text.decode()), 1) if value in line]
    if not lines:
        raise ToolError(
            "NOT_FOUND", "target_missing", "arg.hint", file=file, kind="marker", value=_clip(value)
        )
    return [(n, n) for n in lines]


def _named_span(opened, kind, value, occurrence, warnings=None):
    """(start, end) of the function (`kind` "function") or the element ("tag") called `value`."""
    file, text = opened.file, opened.text
    language = _language_of(opened.real, text)
    if language is None:
        raise ToolError("NOT_FOUND", "not_checkable", file=file, what=kind)
    string = text.decode()
    if kind == "function":
        found = _function_spans(string, language, value, astray=True)
        if found:
            return _one_function(file, value, found, occurrence, warnings)
    else:  # the first element of that name, as the target has always meant, or the `occurrence`th
        elements = _tag_elements(string, language, value)
        if elements:
            return _tag_span(
                file,
                string,
                elements[_one_of(file, kind, value, occurrence, elements, ambiguous=False)],
                value,
            )
    nearest = _nearest((function_names if kind == "function" else tag_names)(string, language), value)
    raise ToolError(
        "NOT_FOUND",
        "target_missing",
        "target_missing.hint" if nearest else "target_none.hint",
        data={"nearest": nearest},
        file=file,
        kind=kind,
        value=_clip(value),
        nearest=", ".join(nearest),
    )


def _one_function(file, value, found, occurrence, warnings):
    """The (start, end) of the definition of `value` that `occurrence` picks among `found` (every
    definition in file order): several without it are for the caller to choose (AMBIGUOUS; a read
    shows the first and warns), one with no lines of its own is NOT_FOUND saying why."""
    if occurrence is None and all(isinstance(f, _Astray) for f in found):  # (AMBIGUOUS would lead nowhere)
        raise _no_lines_of_its_own(file, value, found[0])
    spans = [(f.line, f.line) if isinstance(f, _Astray) else f for f in found]
    if warnings is not None and occurrence is None and len(spans) > 1:
        warnings.append(_several_functions(value, spans))
    chosen = found[_one_of(file, "function", value, occurrence, spans, ambiguous=warnings is None)]
    if isinstance(chosen, _Astray):
        raise _no_lines_of_its_own(file, value, chosen)
    return chosen


# A definition with no lines of its own (_definition_spans): its line, and either the range of the
# function whose lines they are (`found`), or the other names its one line defines (`shared`).
_Astray = collections.namedtuple("_Astray", "line found shared")


def _no_lines_of_its_own(file, value, astray):
    """NOT_FOUND for a function whose line belongs to another function, or defines others too."""
    found = astray.found
    if astray.shared:
        key, other = "target_shared_line", ", ".join(astray.shared)
    else:
        key = "target_no_lines"
        other = (
            f"{found['kind']} {found.get('name') or '?'} (lines {found['start']}-{found['end']})"
            if found
            else "-"
        )
    fields = {"file": file, "value": _clip(value), "line": astray.line, "other": other}
    return ToolError("NOT_FOUND", key, data={"line": astray.line}, **fields)


def _tag_span(file, string, element, value):
    """(first line, last line) of the element (open offset, close end) a tag target names;
    NOT_FOUND for one never closed (`<li>` with its end tag left out), and for one whose lines hold
    other text before its open tag or after its end (comments aside): a target names whole lines,
    and an edit of `<br/>` in `<p>a<br/>b</p>` took the paragraph."""
    opened, closed = element
    line = _line_of(string, opened)
    if closed is None:
        raise ToolError("NOT_FOUND", "tag_unclosed", file=file, value=_clip(value), line=line)
    first, after = string.rfind("\n", 0, opened) + 1, string.find("\n", closed)
    around = string[first:opened] + string[closed : len(string) if after < 0 else after]
    if _MARKUP_COMMENT.sub("", around).strip():
        raise ToolError("NOT_FOUND", "tag_shared_line", file=file, value=_clip(value), line=line)
    return line, _line_of(string, closed - 1)


_MARKUP_COMMENT = _LazyPattern(r"<!--.*?-->")


def _several_functions(name, spans):
    """The warning of a read by a function name defined more than once (it shows the first)."""
    where = ", ".join(f"{a}-{b}" for a, b in spans[:20])
    return ("w.function_several", {"name": _clip(name), "count": len(spans), "where": where})


def _definition_spans(string, language, name, astray=False, methods=True):
    """(start, end) of every definition called `name`, in file order: the range of the innermost
    function at its line, when that is the definition of `name`. A definition whose line holds
    another's (`callback = () => {}` in a method's parameters), or whose one line also holds a
    definition outside it (`class A { f() {..} }`, `f() {..} g() {..}`), has no lines of its own:
    a target would take more than it. With `astray`, such a one stands in the list as an
    _Astray (so that occurrences count every definition); without, it is left out. Without
    `methods`, a method (a function in a class) is left out too."""
    positions = {}
    for _name, pos in _definitions(string, language, 0, len(string), name):
        positions.setdefault(_line_of(string, pos), pos)
    spans = []
    # (kept when the walks to each definition would cover more than a whole fine walk does: not
    # for one definition, nor for two near the top of a large file)
    _KEPT_WALKS.append({} if sum(positions.values()) > _KEEP_WALK_AT * len(string) else None)
    try:
        for line, pos in sorted(positions.items()):
            one, kind = _definition_span(string, language, name, line, pos)
            if isinstance(one, _Astray):  # (checked first: an _Astray is a tuple too)
                spans += [one] if astray else []
            elif one not in spans and (methods or kind != "method"):
                spans.append(one)
    finally:
        _KEPT_WALKS.pop()
    return spans


def _definition_span(string, language, name, line, pos):
    """((start, end), kind) of the definition of `name` at `line` (its name at `pos`), or (an
    _Astray, None)."""
    found, shared = function_range(string, language, line), ()
    one_line = bool(found) and found["start"] == found["end"] == line  # (its own, or a closure in it)
    if one_line:
        shared = _defined_beside(string, language, pos)
    if found and (one_line or _same_name(found.get("name"), name)) and not shared:
        return (found["start"], found["end"]), found.get("kind")
    return _Astray(line, found, shared), None


def _defined_beside(string, language, pos):
    """The names of the definitions on the line of the one named at `pos` that stand outside it:
    before it (a class around it, a function before it), or after it outside every block that
    opens after its name (not a closure in its body). Only that line is read."""
    start = string.rfind("\n", 0, pos) + 1
    end = _line_end(string, start, len(string))
    on_line = {other: other_name for other_name, other in _definitions(string, language, start, end)}
    blocks = None
    beside = []
    for other, other_name in sorted(on_line.items()):
        if other == pos:
            continue
        if other > pos:
            blocks = _brace_blocks(string, language, start, end) if blocks is None else blocks
            if any(pos < brace < other < close for brace, close in blocks):
                continue  # (inside a block after its name: its own)
        beside.append(other_name)
    return list(dict.fromkeys(beside))


def _same_name(found, name):
    """Whether a range's name (`Cart.total`, `Cart::total`, `total`) is that of `name`'s last part."""
    last = _last_part(str(found or ""))
    return bool(last) and last == _last_part(name)


def _function_spans(string, language, name, astray=False):
    """_definition_spans of `name` (JavaScript's `#total`: the private one; Ruby's `Cart#total`:
    the instance method); when it has none and is qualified (`Cart.total`, `Cart::total`,
    `shop.Cart.total`), those of its last part inside (at any depth) one of the part before it,
    inside one of the part before that..., and those written outside it (C++ `Cart::total()`
    below the class), in file order: both are that name (an edit picks one by occurrence)."""
    written = _spans_as_written(string, language, name, astray)
    if written is not None:
        return written
    spans = _definition_spans(string, language, name, astray)
    if language == "rust":  # (a tuple or unit struct has no block: counted, not left to its impl)
        spans = sorted(set(spans + _rust_bare_structs(string, name)))
    if language in ("ruby", "lua") and len(spans) > 1:
        spans = _outside_strings(string, language, spans)
    parts = name.replace("::", ".").split(".")
    if spans or len(parts) < 2 or not all(parts):
        return spans
    found = _spans_inside(string, language, parts) + _spans_written_outside(string, language, parts)
    return sorted(set(found + _spans_in_namespaces(string, language, parts)))


def _spans_as_written(string, language, name, astray):
    """The spans of a name written as its language names one kind of method, or None: JavaScript's
    `#total` (`Cart.#total`), the private one (a method's name is `total`, a field's `#total = () =>`
    its own); Ruby's `Cart#total`, the instance method."""
    private = re.fullmatch(r"(?:(.+)\.)?#(\w+)", name)  # (JavaScript's `#save()`, named `save`)
    if private:
        plain = ".".join(filter(None, private.groups()))
        head = r"^\s*(?:(?:static|async|get|set|override|readonly)\s+|\*\s*)*"  # (a definition's line)
        spans = _function_spans(string, language, plain, astray)
        spans = _written_as(string, spans, rf"{head}#{private[2]}\s*[(<=]", rf"{head}{private[2]}\s*[(<=]")
        fields = [span for span in _definition_spans(string, language, name, astray) if span not in spans]
        return sorted(spans + fields, key=lambda span: span.line if isinstance(span, _Astray) else span[0])
    if language == "ruby" and re.fullmatch(r"\w+#\w+[?!=]?", name):  # (`Cart#save`: an instance method)
        method = re.escape(name.split("#")[1])
        spans = _function_spans(string, language, name.replace("#", "."), astray)
        spans = [span for span in spans if not _in_singleton_class(string, span)]
        return _written_as(string, spans, rf"^\s*def\s+{method}(?![\w?!=])", rf"^\s*def\s+\w+\.{method}")
    return None


def _in_singleton_class(string, span):
    """Whether the Ruby definition `span` stands in a `class << self` block: a class method."""
    lines = string.split("\n")
    line = span.line if isinstance(span, _Astray) else span[0]
    text = lines[line - 1]
    indent = len(text) - len(text.lstrip())
    for above in reversed(lines[: line - 1]):
        if above.strip() and len(above) - len(above.lstrip()) < indent:
            return bool(re.match(r"\s*class\s*<<\s*self\b", above))
    return False


def _written_as(string, spans, pattern, other):
    """The `spans` whose definition is written as `pattern` says: of the lines of each span that
    start as a definition of its name does, `pattern` or `other` (written otherwise), the first
    must match `pattern` (a comment that mentions the name is no such line)."""
    lines, kept = string.split("\n"), []
    for span in spans:
        start, end = (span.line, span.line) if isinstance(span, _Astray) else span
        for text in lines[start - 1 : end]:
            if re.search(pattern, text) or re.search(other, text):
                kept += [span] if re.search(pattern, text) else []
                break
    return kept


def _spans_in_namespaces(string, language, parts):
    """The definitions `parts` names when its first parts are the namespaces around them: C++
    `shop::Cart::total` for `Cart::total()` or `class Cart { total() }` inside `namespace shop {`
    (or `namespace shop::inner {`, or one namespace inside another)."""
    namespaces = _namespace_blocks(string, language, parts[0]) if language in ("cpp", "csharp", "php") else {}
    found = []
    for k in range(1, len(parts)):
        outer = namespaces.get("::".join(parts[:k]), []) + _nested_in(namespaces, parts[:k])
        rest = parts[k:]
        if not outer:
            continue
        if len(rest) == 1:
            found += _members_named(string, language, rest[0], outer)
            continue
        inner = _spans_inside(string, language, rest) + _spans_written_outside(string, language, rest)
        found += [(a, b) for a, b in inner if any(c <= a and b <= d for c, d in outer)]
    return found


def _members_named(string, language, name, outer):
    """The definitions of `name` inside the blocks `outer` that a namespace may hold itself: not
    methods, which their class names (`util::parse` is no `Parser::parse` inside `namespace util`)."""
    spans = _definition_spans(string, language, name, methods=False)
    return [(a, b) for a, b in spans if any(c <= a and b <= d for c, d in outer)]


def _nested_in(blocks, names):
    """The (first, last) lines of the blocks called names[-1] inside one called names[-2]... (a
    block may share its lines with the one around it: `namespace a { namespace b {`)."""
    spans = blocks.get(names[0], [])
    for name in names[1:]:
        spans = [(a, b) for a, b in blocks.get(name, []) if any(c <= a and b <= d for c, d in spans)]
    return spans


_NAMESPACE_OPEN = _LazyPattern(  # (at a line's start or after `{` `;`; comments may stand before its `{`)
    r"(?:^|(?<=[{;]))[ \t]*(?:(?:inline|export)[ \t]+)?namespace\s+([A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)"
    r"(?:\s|//[^\n]*|/\*.*?\*/)*\{",
    re.M | re.S,
)


def _namespace_blocks(string, language, first):
    """{name: [(first line, last line)]} of the namespace blocks (`namespace shop {`) of a file,
    when one is called `first` (else none are looked for: a qualified target of a 5 MB file
    classified every block of it). Those in strings and comments open no block."""
    if not re.search(rf"\bnamespace\s+{re.escape(first)}\b", string):
        return {}
    import bisect

    closes = dict(_brace_blocks(string, language, 0, len(string)))
    starts = _line_starts(string)
    blocks = {}
    for m in _NAMESPACE_OPEN.finditer(string):
        close = closes.get(m.end() - 1)
        if close is not None:
            lines = (bisect.bisect_right(starts, m.start()), bisect.bisect_right(starts, close))
            blocks.setdefault(re.sub(r"\s+", "", m[1]), []).append(lines)
    return blocks


def _outside_strings(string, language, spans):
    """Of a Ruby or Lua name's definitions, those not inside a string that spans lines, when there
    are any: a template's `def helper` in a heredoc beside the class's own made every edit of
    `helper` AMBIGUOUS, and a read showed the template's first. (One in a string is still found
    when it is the only one: `class_eval <<-RUBY` defines methods so.)"""
    tokens = _multiline_tokens(string, language, 0, len(string))
    line_starts = _line_starts(string)

    def in_string(span):
        line = span.line if isinstance(span, _Astray) else span[0]
        i = _span_at(tokens.spans, tokens.starts, line_starts[line - 1])
        return i is not None and not tokens.comments[i]

    return [span for span in spans if not in_string(span)] or spans


def _rust_bare_structs(string, name):
    """(first line, line) of each Rust tuple or unit struct called `name` (`pub struct Meters(pub
    f64);`, `struct Marker;`): a definition with no block of its own, from its attributes and doc
    comment on; not one in a string or a comment that spans lines (a test's source text)."""
    pattern = rf"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?struct[ \t]+{re.escape(name)}\b[^{{;\n]*;"
    found, spans, lines = [], None, None
    for m in re.finditer(pattern, string, re.M):
        if spans is None:  # (worked out once, at the first such line)
            spans, lines = _multiline_tokens(string, "rust", 0, len(string)), string.split("\n")
        if _span_at(spans.spans, spans.starts, m.start()) is None:
            line = _line_of(string, m.start())
            found.append((_attached_above(lines, line), line))
    return found


def _attached_above(lines, line):
    """The first line of the attributes (`#[derive(..)]`) and doc comment (`///`) right above
    line `line` (1-based), or `line`."""
    while line > 1 and lines[line - 2].lstrip().startswith(("#[", "///")):
        line -= 1
    return line


def _spans_inside(string, language, parts):
    """The definitions of parts[-1] inside one of parts[-2], inside one of parts[-3]..."""
    spans = _definition_spans(string, language, parts[0])
    for part in parts[1:]:
        spans = [
            (a, b) for a, b in _definition_spans(string, language, part)
            if any(c <= a and b <= d and (c, d) != (a, b) for c, d in spans)
        ]  # fmt: skip
    return spans


def _spans_written_outside(string, language, parts):
    """The definitions of parts[-1] written outside their type, with the rest of `parts` before the
    name on its line: C++ `int shop::Cart::total()`, Go `func (c *Cart) total()` (by the receiver's
    type: `func (server *Server) Start()` is no `server.Start`)."""
    outer = r"\s*::\s*".join(re.escape(part) for part in parts[:-1])
    receiver = rf"\bfunc\s*\(\s*(?:\w+\s+|\w+\s*(?=\*))?\*?\s*{outer}(?:\[[^\]]*\])?\s*\)\s*"
    templated = r"(?:\s*<[^<>\n]*>)?\s*::\s*".join(re.escape(part) for part in parts[:-1])  # (`Box<T>::get`)
    written = re.compile(rf"(?:\b{templated}(?:\s*<[^<>\n]*>)?\s*::\s*|{receiver})$")
    spans = []
    for _name, pos in _definitions(string, language, 0, len(string), parts[-1]):
        if written.search(string, string.rfind("\n", 0, pos) + 1, pos):
            found = function_range(string, language, _line_of(string, pos))
            if found and (found["start"], found["end"]) not in spans:
                spans.append((found["start"], found["end"]))
    return spans


def _one_of(file, kind, value, occurrence, found, ambiguous=True):
    """The index in `found` (what a target names, in file order) that `occurrence` (1-based)
    picks; without it the first, or AMBIGUOUS when there are several and `ambiguous` (a marker
    on several lines, a function defined several times: an edit must not guess)."""
    if occurrence is not None:
        occurrence = _as_int("occurrence", occurrence)
        if occurrence < 1:  # (never right, in any file)
            raise invalid("line_below_one", name="occurrence", value=occurrence)
        if occurrence > len(found):
            raise ToolError(
                "OUT_OF_RANGE", "occurrence_range", "arg.hint", value=occurrence, kind=kind,
                target=_clip(value), count=len(found),
            )  # fmt: skip
        return occurrence - 1
    if ambiguous and len(found) > 1:
        raise _ambiguous_target(file, kind, value, found)
    return 0


def _ambiguous_target(file, kind, value, spans):
    """AMBIGUOUS naming the (start, end) of each thing a marker or function target names."""
    return ToolError(
        "AMBIGUOUS",
        "function_ambiguous" if kind == "function" else "marker_ambiguous",
        "marker_ambiguous.hint",
        data={"candidates": _places(spans)},
        file=file,
        value=_clip(value),
        count=len(spans),
        where=", ".join(f"{a}-{b}" if a != b else str(a) for a, b in spans[:20]),
    )


# --- the shared end of every edit -----------------------------------------------------------------


class Change:
    """What a line edit computed: the new body, the old line range it replaced and result members."""

    def __init__(self, text, plan, first, last, added, fields, warnings=None, chip_text=None, at=0, raw=None):
        self.old_body = text.body
        self.plan = plan  # (a, block, b): new body = old_body[:a] + block + old_body[b:]
        # the same before the final-newline rule: whole lines a..b and their new lines, each
        # terminated (None: `plan` replaces bytes literally, as a whole-file write does)
        self.raw = raw
        self.at = at  # byte offset where line `first` starts in old_body
        self._body = None
        self.total = spliced_line_count(text, plan)
        self.first, self.last = first, last  # old lines replaced (last = first - 1 for an insertion)
        self.added = added
        self.fields = fields
        self.warnings = warnings or []
        self.chip_text = chip_text  # delete: the text to keep as a chip before writing
        self.checked = False  # whether edit_breaks() ran: then `breaks` is its answer
        self.breaks = None
        self.check_error = None  # a scanner exception's text, when the check itself failed
        self.plans = None  # several plans checked as one edit (a be-edit file's items), or None
        self.keep_scan = True  # False for a preview: its text is not the file's, nothing to keep
        self.newline_only = False  # a patch hunk that only adds or drops the final newline

    @property
    def body(self):
        """The whole new body, joined only when something needs it (a large file is never joined)."""
        if self._body is None:
            self._body = join_splice(self.old_body, self.plan)
        return self._body


def spliced_line_count(text, plan):
    """line_count(body[:a] + block + body[b:]) without building it or counting the whole body again."""
    body = text.body
    a, block, b = plan
    newlines = text.newlines() - body.count(b"\n", a, b) + block.count(b"\n")
    if b < len(body):
        last = body[-1:]
    else:
        last = block[-1:] if block else body[a - 1 : a] if a else b""
    return newlines + (1 if last and last != b"\n" else 0)


def edit_breaks(opened, change, ctx=None):
    """What the edit breaks (docs/behaviour.md#the-post-edit-balance-check): a list of new problems,
    or None when it cannot be checked (unknown language, a scanner error). Computed once per Change."""
    real, text = opened.real, opened.text
    if not change.checked:
        change.checked = True
        language = _language_of(real, text)
        if language in LANGUAGES:
            try:
                memory = ctx.scan_memory() if ctx is not None else None
                plans = change.plans or [change.plan]
                change.breaks = _breaks_of_plan(text, plans, language, memory, real, change.keep_scan)
            except Exception as exc:  # a scanner bug must not block an edit: reported, not hidden
                if os.environ.get("BETTER_EDIT_DEBUG"):
                    raise
                change.check_error = f"{type(exc).__name__}: {exc}"
    return change.breaks


def _edit_pieces(text, old_text, plans):
    """The pieces of a Text edited by byte `plans` [(a, block, b), ...]: (regions (start, stop,
    new length) in characters, the old text's line end after and line start before each, the
    new bytes' pieces and the new text's pieces but the last, the byte offset after the last
    plan)."""
    narrow = len(old_text) == len(text.body)  # one byte per character
    regions, line_ends, line_befores, bytes_pieces, text_pieces, chars, done = [], [], [], [], [], 0, 0
    for a, block, b in plans:
        gap = text.decode(done, a)
        chars += len(gap)
        start = a if narrow else chars
        stop = b if narrow else start + len(text.decode(a, b))
        new_block = block.decode(text.codec)
        regions.append((start, stop, len(new_block)))
        line_ends.append(old_text.find("\n", stop))
        line_befores.append(old_text.rfind("\n", 0, start))
        text_pieces += [gap, new_block]
        bytes_pieces += [memoryview(text.body)[done:a], block]
        chars, done = stop, b
    return regions, line_ends, line_befores, bytes_pieces, text_pieces, done


def _scan_before(text, old_text, language, memory, key):
    """The scan of the text before an edit: the one `memory` kept of it, else a new one."""
    if memory is not None:
        size = len(text.body)  # (characters at most)
        before = _Digest([text.body]) if memory.wants_digest(key, language, size) else None
        old = memory.recall(key, language, text, old_text, before)
        if old is not None:
            return old
    return _BalanceScan(old_text, language)


def _breaks_of_plan(text, plans, language, memory=None, key=None, keep=True):
    """problems_introduced() for byte plans [(a, block, b), ...] of a Text (ascending, not
    overlapping: one edit, or the items of a be-edit), worked out in character offsets.

    The text before the edit is scanned whole (_BalanceScan), the edited text only around the edit
    (_rescan: docs/behaviour.md#the-post-edit-balance-check). `memory` (a _ScanMemory or
    _ScanFiles) remembers the scan of the text an edit of `key` (the real path) left: when the
    next edit starts from exactly that text, the text before it is not scanned again."""
    old_text = text.decode()
    old = _scan_before(text, old_text, language, memory, key)
    regions, line_ends, line_befores, bytes_pieces, text_pieces, done = _edit_pieces(text, old_text, plans)
    old_length = len(old_text)
    del old_text  # memory: the bytes, one decoded text and its pieces at the most (SPEC: 3x a file)
    bytes_pieces.append(memoryview(text.body)[done:])
    new_size = sum(len(piece) for piece in bytes_pieces)
    kept = memory is not None and keep and memory.wants_digest(key, language, new_size, after=True)
    after_digest = _Digest(bytes_pieces) if kept else None
    text_pieces.append(text.decode(done))
    new_text = "".join(text_pieces)
    del text_pieces
    after = _rescan(old, new_text, regions, old_length, line_ends, line_befores)
    if memory is not None and keep:
        memory.keep(key, language, text, after_digest, new_text, after)
    return problems_introduced(old, after, new_text)


def balance_sentence(ctx, opened, change, warnings):
    """docs/behaviour.md#the-post-edit-balance-check: "ok", "not checked", or what the edit broke."""
    broken = edit_breaks(opened, change, ctx)
    if broken is None:
        if change.check_error:
            warnings.append(("w.scanner_error", {"detail": change.check_error}))
        return tr(ctx.lang, "b.not_checked")
    if not broken:
        return tr(ctx.lang, "b.ok")
    return describe_problems(ctx, broken, "b.broke")


def describe_problems(ctx, problems, key):
    """The words for `problems` (unmatched entries), grouped by problem and symbol, in ctx's language."""
    groups = {}
    for item in problems:
        group = groups.setdefault((item["problem"], item["symbol"]), [0, item["line"]])
        group[0] += 1
    items = [
        tr(ctx.lang, "b." + problem, count=count, symbol=symbol, line=line)
        for (problem, symbol), (count, line) in groups.items()
    ]
    return tr(ctx.lang, key, items=", ".join(items))


def _edit_diff(ctx, args, file, text, change):
    """The diff of a window of 3 lines around the edit, cut from the old body and the plan."""
    body = text.body
    # one line more than the context on each side: the final-newline rule may change the line
    # before the edit, and unified_hunk trims the window to 3 lines around what really changed
    first = max(1, change.first - 4)
    old_last = min(text.total(), change.last + 4)
    start = change.at
    for _ in range(change.first - first):  # back up to the first context line
        start = body.rfind(b"\n", 0, start - 1) + 1
    stop = skip_lines(body, start, old_last - first + 1)
    a, block, b = change.plan
    old_lines = split_decoded(body[start:stop].decode(text.codec))
    new_lines = split_decoded(b"".join((body[start:a], block, body[b : max(b, stop)])).decode(text.codec))
    if args.get("format") == "plain":
        return plain_diff(old_lines, new_lines, first)
    around = (change.first - first, len(old_lines) - (change.last - first + 1))
    return unified_hunk(file, old_lines, new_lines, first, around=around)


def _put_event(result, event_id):
    """`event_id` into a result, when the commit kept one (none when its snapshot could not be
    saved whole: the schema has no null for it)."""
    if event_id:
        result["event_id"] = event_id


def finish_edit(ctx, tool, args, opened, change):
    """Diff, balance, snapshot, atomic write, read-back; returns the result object (docs/behaviour.md#results)."""
    file, real, text = opened.file, opened.real, opened.text
    warnings = list(change.warnings)
    a, block, b = change.plan
    changed = text.body[a:b] != block
    result = {"status": "ok", "file": file, "path": real, "changed": changed}
    result.update(change.fields)
    result["total"] = change.total
    view = _written_view(opened, change)
    if view:
        result["viewed_code_id"] = view
    change.keep_scan = not args.get("preview")
    if not args.get("brief"):
        result["diff"] = _edit_diff(ctx, args, file, text, change) if changed else ""
        result["balance"] = balance_sentence(ctx, opened, change, warnings)
    if args.get("preview"):
        result["preview"] = True
    if not changed:  # nothing to write: no snapshot, no event, no chip (a preview says so too)
        warnings.append(("w.unchanged", {}))
    elif not args.get("preview"):
        if not _prose(real, text):  # (prose: code blocks of other files)
            warnings += _other_indentation(text, change)
        summary = _summary(tool, change)
        payload = _edit_payload(text, opened.raw, change)
        event_id, write_warnings = commit_bytes(ctx, tool, opened, payload, summary)
        warnings += write_warnings
        _put_event(result, event_id)
        if change.chip_text is not None:  # (once the text is gone: a failed delete kept no chip)
            warnings += _keep_as_chip(ctx, tool, args, change.chip_text, result)
    if warnings:
        result["warnings"] = _local_warnings(ctx, warnings)
    return result


def _prose(real, text):
    """Whether a file is prose (Markdown, or of no known language and no Makefile), whose code
    blocks show other files' indentation."""
    language = _language_of(real, text)
    return language == "markdown" or (language is None and not _MAKEFILE.fullmatch(os.path.basename(real)))


_MAKEFILE = _LazyPattern(r"(?i)(?:GNU)?makefile|.*\.(?:mk|mak)")
_INDENT_AROUND = 1 << 14  # bytes on each side of an edit whose lines say how the file indents


def _other_indentation(text, change):
    """w.indent_style when a line the edit wrote indents with tabs where the lines around it
    indent with spaces, or the reverse (at least 3 of them, 3 to 1): a model's spaces in a
    Makefile or a Go file, its tabs in Python. Not when a line it replaced, or the nearest indented
    line above it, indents as the new line does (C's alignment of a continued signature, a
    variable's continued list in a Makefile, a heredoc's body)."""
    a, block, b = change.plan
    if text.codec.startswith(("utf-16", "utf-32")) or not block:
        return []
    body = text.body
    ours = _indented_with(body[max(0, a - _INDENT_AROUND) : a] + b"\n" + body[b : b + _INDENT_AROUND])
    if ours is None:
        return []
    other = rb"(?m)^  +\S" if ours == "tabs" else rb"(?m)^\t+\S"
    m = re.search(other, block)
    above = re.findall(rb"(?m)(?<!\\\n)^[ \t]+\S", body[max(0, a - 4096) : a])  # (not a continued list's)
    if m is None or re.search(other, body[a:b]) or (above and re.match(other, above[-1])):
        return []
    line = change.first + block.count(b"\n", 0, m.start())
    keys = ("indent.tabs", "indent.spaces") if ours == "tabs" else ("indent.spaces", "indent.tabs")
    return [("w.indent_style", {"line": line, "ours_key": keys[0], "theirs_key": keys[1]})]


def _indented_with(lines):
    """ "tabs" or "spaces" when at least 3 of the indented `lines` (bytes) indent so, 3 to 1; else None."""
    tabs = len(re.findall(rb"(?m)(?<!\\\n)^\t+\S", lines))  # (not the lines of a list continued by `\`)
    spaces = len(re.findall(rb"(?m)(?<!\\\n)^  +\S", lines))
    if tabs >= 3 and tabs >= 3 * spaces:
        return "tabs"
    return "spaces" if spaces >= 3 and spaces >= 3 * tabs else None


def _keep_as_chip(ctx, tool, args, text, result):
    """Deleted `text` kept as a chip (its id into `result`); the warnings that say so."""
    chip_id, warnings = ChipStore(ctx).save(
        "be-" + tool, {k: v for k, v in args.items() if k != "content"}, "", text
    )
    if chip_id:
        result["chip"] = chip_id
        warnings = [*warnings, ("w.deleted_chip", {"id": chip_id})]
    return warnings


def _written_view(opened, change):
    """The viewed_code_id of the lines an edit wrote, as they now stand (a preview's: as they would;
    None: it wrote no line)."""
    a, block, b = change.plan
    body, eol = opened.text.body, dominant_eol(opened.text.body)
    if not change.added:
        return None
    if a == len(body) and body and not body.endswith(b"\n") and block.startswith(eol):
        block = block[len(eol) :]  # (an append first terminated the old last line)
    first, last = change.first, change.first + change.added - 1
    if line_count(block) != change.added:  # not whole lines: cut them from the new body instead
        new_body = change.body
        block = new_body[slice(*line_span(new_body, first, last))]
    unique = None
    if len(opened.text.body) <= VIEW_UNIQUE_BYTES:  # (a larger new body is never joined for it)
        new_body = change.body
        at = line_span(new_body, first, last)[0]
        unique = (new_body, at, view_unique(new_body, block, at))
    return make_view_id(opened.real, first, last, block, change.total, unique)


def _summary(tool, change):
    if change.last < change.first:
        return f"{tool}: +{change.added} after line {change.first - 1}"
    return f"{tool}: lines {change.first}-{change.last} -> {_counted(change.added, 'line')}"


def _edit_payload(text, raw, change):
    """The new file as pieces: unchanged head and tail are ranges of the old file (docs/behaviour.md#limits speed)."""
    if text.wire:
        return payload_of(text.to_bytes(change.body))
    a, block, b = change.plan
    head = len(text.bom) + a
    tail = len(text.bom) + b
    return [(raw, 0, head, 0), (bytes(block), 0, len(block), None), (raw, tail, len(raw), tail)]


def commit_bytes(ctx, tool, opened, payload, summary):
    """One file's new bytes through the journaled commit; returns (event_id, warnings)."""
    place = opened.place
    st = _settled_stat(ctx, place, opened.st)
    return commit_files(ctx, tool, [FileCommit(place, st, opened.raw, payload)], summary)


def _settled_stat(ctx, place, st, listings=None):
    """The stat to write by: a second name that a killed process of ours left on the file (a
    temporary's kept name, a snapshot's unfinished .bin) is removed first, so the file is not taken
    for a hard-linked one and written in place. `listings`: folder listings of this call, shared
    by the files of one folder (_Folder.sweep_temps)."""
    if st is None or st.st_nlink == 1:
        if st is not None:
            place.folder.sweep_temps(place.name, listings=listings)
        return st
    dropped = place.folder.sweep_temps(place.name, st, listings)
    for each in _journal_contexts(ctx):  # (a call of any workspace may have left one: its lock is ours)
        dropped = SnapshotStore(each).drop_stray_links(st) or dropped
    return place.lstat() if dropped else st


def edit_file(ctx, tool, args, compute):
    """Lock the file, load it, let `compute(opened)` build a Change, then finish_edit."""
    with locate(ctx, args["file"]) as place, lock_file(ctx, place):
        opened = open_text(ctx, place, args.get("encoding"))
        change = compute(opened)
        if not args.get("preview"):
            check_writable(place, opened.st)
        else:
            change.warnings += _preview_refused(ctx, place, opened.st)
        return finish_edit(ctx, tool, args, opened, change)


def _preview_refused(ctx, place, st):
    """[a warning] when the edit a preview shows would be refused for want of permission, else []."""
    try:
        check_writable(place, st)  # (a file to create: the folder it goes in, or the last that exists)
    except ToolError as exc:
        return [_preview_refusal(ctx, exc)]
    return []


def _preview_refusal(ctx, exc):
    """The warning of a preview whose edit the commit would refuse with `exc`."""
    return ("w.preview_refused", {"message": exc.to_dict(ctx.lang)["message"]})


# --- read (docs/cli.md#read) ----------------------------------------------------------------------


def tool_read(ctx, args):
    """Read lines. Arguments: `file`, `start`, `end`, `target`, `brief`, `encoding`, `max_lines`.
    Result: `start`, `end`, `total`, `content`, `eol`, `encoding`, `viewed_code_id`, `truncated`
    and `next_start` when `max_lines` cut the range, `warnings`."""
    file = args["file"]
    _read_arguments(args)  # (before a large file is read: 0.84 s for 100 MiB to say start 0 is wrong)
    if _streamable(ctx, args):
        with locate(ctx, file) as place:
            if place.stat(ctx).st_size > STREAM_READ_BYTES:
                streamed = _read_streaming(ctx, args, place)
                if streamed is not None:
                    return streamed
    real, text = read_text(ctx, file, args.get("encoding"))
    opened = Opened(file, real, text)
    body = text.body
    total = text.total()
    warnings = []
    start, end = _read_window(ctx, args, opened, total, warnings)
    a, b = line_span(body, start, end) if total else (0, 0)
    end, chunk, shown = _read_fit(ctx, args, body[a:b], text.codec, start, end, warnings)
    crlf, lf = eol_counts(body, text.newlines())
    shape = {"crlf": crlf, "lf": lf, "final_newline": not body or body.endswith(b"\n")}
    shape["cr_only"] = b"\r" in body and _breaks_with_cr(body.count(b"\r") - crlf, crlf + lf)
    unique = (body, a, view_unique(body, chunk, a))
    return _read_result(ctx, args, opened, (start, end, total), chunk, shape, warnings, unique, shown)


def _read_arguments(args):
    """INVALID_ARGUMENT for numbers of a read that can never be right, whatever the file holds."""
    start, end = args.get("start", 1), args.get("end")
    if start < 1:
        raise invalid("line_below_one", name="start", value=start)
    if end is not None and 0 < end < start:
        raise invalid("end_before_start", start=start, end=end)


def _read_window(ctx, args, opened, total, warnings):
    """(start, end) to show: the range asked for, cut to max_lines (a warning says where to go on)."""
    start, end = _read_range(ctx, args, opened, total, warnings)
    max_lines = args.get("max_lines", READ_MAX_LINES if ctx.mcp else 0)
    if max_lines is not None and max_lines < 0:
        raise invalid("max_lines_negative", value=max_lines)
    if max_lines and end - start + 1 > max_lines:
        end = start + max_lines - 1
        warnings.append(("w.truncated", {"max_lines": max_lines, "next_start": end + 1}))
    return start, end


def _shown_length(line):
    """Characters a read shows of a line: without its terminator (a CR alone stays in the line)."""
    if line.endswith("\n"):
        return len(line) - (2 if line.endswith("\r\n") else 1)
    return len(line)


def _read_fit(ctx, args, chunk, codec, start, end, warnings):
    """(end, chunk, shown): a server's read cut to READ_MAX_CHARS characters of content as
    max_lines cuts it to lines, at the last whole line that fits (a warning says where to go on).
    A first line longer than that stays whole in `chunk` (the view covers it, so an edit by the
    view works) and `shown` is how many of its characters the content holds; else None."""
    if not ctx.mcp or args.get("max_lines") == 0 or len(chunk) + (end - start + 1) * 12 <= READ_MAX_CHARS:
        return end, chunk, None  # (content is at most a character a byte plus "N\t" and "\n" a line)
    used = offset = 0
    line = start
    while line <= end:
        stop = chunk.find(b"\n", offset) + 1 or len(chunk)
        used += len(str(line)) + 2 + _shown_length(str(memoryview(chunk)[offset:stop], codec))
        if used > READ_MAX_CHARS:
            break
        offset, line = stop, line + 1
    if line > end:
        return end, chunk, None
    shown = None
    if line == start:  # (one line longer than the whole budget)
        offset, line = stop, line + 1
        shown = READ_MAX_CHARS - len(str(start)) - 1
        length = len(str(memoryview(chunk)[:offset], codec).rstrip("\r\n"))
        warnings.append(("w.line_cut", {"line": start, "length": length, "shown": shown}))
    if line <= end:
        warnings.append(("w.truncated_chars", {"chars": READ_MAX_CHARS, "next_start": line}))
    return line - 1, chunk[:offset], shown


def _read_result(ctx, args, opened, window, chunk, shape, warnings, unique=None, shown=None):
    """The result of a read of lines start..end, whose bytes are `chunk` (`unique`: (body, offset)
    when they stand nowhere else in the file, so the view may follow them when they move; `shown`: the content
    holds this many characters of its one line, _read_fit)."""
    real, text = opened.real, opened.text
    start, end, total = window
    result = {"status": "ok", "file": args["file"], "path": real}
    if any(item[0] in ("w.truncated", "w.truncated_chars") for item in warnings if isinstance(item, tuple)):
        result.update(truncated=True, next_start=end + 1)
    token = make_view_id(real, start, end, chunk, total, unique)
    result.update(start=start, end=end, total=total)
    content = render_numbered(split_decoded(chunk.decode(text.codec)), start)
    if shown is not None:
        content = content[: len(str(start)) + 1 + shown]
    if not args.get("brief"):
        result["content"] = content
    result.update(eol=eol_name(shape["crlf"], shape["lf"]), encoding=text.encoding, viewed_code_id=token)
    warnings += _shape_warnings(shape)
    if warnings:
        result["warnings"] = _local_warnings(ctx, warnings)
    if ctx.mcp and shown is None:  # (a cut line is not what the view covers: no diff against it later)
        ctx.remember_view(token, content, real)
    return result


def _shape_warnings(shape):
    """What a read says of a file's shape: mixed line endings, lines broken by CR alone, no final
    newline."""
    crlf, lf = shape["crlf"], shape["lf"]
    warnings = []
    if crlf and lf:
        warnings.append(("w.mixed_eol", {"crlf": crlf, "lf": lf, "dominant": "CRLF" if crlf > lf else "LF"}))
    if not shape["final_newline"]:
        warnings.append(("w.no_final_newline", {}))
    if shape.get("cr_only"):
        warnings.append(("w.cr_only", {}))
    return warnings


# --- streaming read of a large file (docs/behaviour.md#limits) ------------------------------------

STREAM_READ_BYTES = 64 << 20  # larger UTF-8 files are read by range: memory is the range, not the file
_STREAM_CHUNK = 8 << 20


def _streamable(ctx, args):
    """Ranges by line numbers of UTF-8 files can stream; targets and "auto" need the whole text."""
    return args.get("target") is None and args.get("end") != 0 and not (args.get("encoding") or ctx.encoding)


def _read_streaming(ctx, args, place):
    """tool_read for a large file in two passes of bounded memory: count lines (checking UTF-8 and
    line endings), then cut out the range. None when the file is UTF-16/32 (read whole instead)."""
    fd, st = place.open()
    with open(fd, "rb", closefd=True) as handle:
        sample = handle.read(BINARY_SNIFF_BYTES)
        refuse_binary(sample, place.file)
        if any(sample.startswith(bom) for bom, _name in _BOMS[1:]):
            return None
        bom = b"\xef\xbb\xbf" if sample.startswith(b"\xef\xbb\xbf") else b""
        handle.seek(len(bom))
        shape = _count_stream(handle, place.file, len(bom))
        total = shape["newlines"] + (0 if shape["final_newline"] else 1)
        text = Text(b"", "utf-8", "utf-8-bom" if bom else "utf-8", bom)
        warnings = []
        opened = Opened(place.file, place.real, text)
        start, end = _read_window(ctx, args, opened, total, warnings)
        _Faults.point("streamed")
        handle.seek(len(bom))
        chunk = _cut_lines(handle, start, end) if total else b""
        if _size_and_mtime(os.fstat(handle.fileno())) != _size_and_mtime(st):  # (written between the passes)
            raise ToolError("CONFLICT", "changed_while_read", file=place.file)
    end, chunk, shown = _read_fit(ctx, args, chunk, "utf-8", start, end, warnings)
    return _read_result(ctx, args, opened, (start, end, total), chunk, shape, warnings, shown=shown)


def _count_stream(handle, file, offset):
    """Line and terminator counts of the rest of `handle`; ENCODING at the first byte that is not UTF-8."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    newlines = crlf = cr = 0
    previous = b""
    for chunk in iter(lambda: handle.read(_STREAM_CHUNK), b""):
        try:
            if not chunk.isascii() or decoder.getstate()[0]:
                decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            position = max(0, exc.start - len(decoder.getstate()[0]))
            raise ToolError(
                "ENCODING",
                "not_utf8",
                file=file,
                offset=offset + position,
                byte=chunk[min(position, len(chunk) - 1)],
            ) from None
        newlines += chunk.count(b"\n")
        if b"\r" in chunk or previous == b"\r":  # memchr: far cheaper than counting a pair
            crlf += chunk.count(b"\r\n") + (previous == b"\r" and chunk[:1] == b"\n")
            cr += chunk.count(b"\r")
        previous = chunk[-1:]
        offset += len(chunk)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise ToolError("ENCODING", "not_utf8", file=file, offset=offset - 1, byte=previous[0]) from None
    return {
        "newlines": newlines,
        "crlf": crlf,
        "lf": newlines - crlf,
        "final_newline": previous in (b"", b"\n"),
        "cr_only": _breaks_with_cr(cr - crlf, newlines),  # (classic Mac OS line breaks)
    }


def _cut_lines(handle, start, end):
    """The bytes of lines start..end of the rest of `handle`, read chunk by chunk."""
    line, pieces = 1, []
    for chunk in iter(lambda: handle.read(_STREAM_CHUNK), b""):
        position = 0
        while line < start:
            found = chunk.find(b"\n", position)
            if found < 0:
                break
            line, position = line + 1, found + 1
        if line < start:
            continue
        stop = position
        while line <= end:
            found = chunk.find(b"\n", stop)
            if found < 0:
                stop = len(chunk)
                break
            stop = found + 1
            line += 1
        pieces.append(chunk[position:stop])
        if line > end:
            break
    return b"".join(pieces)


def _read_range(ctx, args, opened, total, warnings):
    file = opened.file
    if args.get("target") is not None:
        if "start" in args or "end" in args:
            raise invalid("target_and_range")
        return resolve_target(ctx, opened, args["target"], warnings)
    start = args.get("start", 1)
    if start < 1:
        raise invalid("line_below_one", name="start", value=start)
    if total == 0:  # (an empty file has one empty range: from line 1)
        if start > 1:
            raise out_of_range(file, start, start, 0)
        return 1, 0
    return _lines_range(ctx, args, opened, start, total, warnings)


def _lines_range(ctx, args, opened, start, total, warnings):
    """The range of a read from `start` of a file of `total` lines (at least one)."""
    file = opened.file
    end = args.get("end")
    if end is not None and 0 < end < start:
        raise invalid("end_before_start", start=start, end=end)
    if start > total:
        raise out_of_range(file, start, start if end is None else end, total)
    if end is None:
        return start, total
    if end == 0:
        return _auto_range(ctx, opened.real, opened.text, start, total, warnings)
    return start, _range_end(file, start, end, total, warnings)


def _range_end(file, start, end, total, warnings):
    """The last line of a read from `start` to `end` (negative: counted from the end), in a file
    of `total` lines: past its end it is clamped (warnings say so)."""
    last = total + 1 + end if end < 0 else end
    if last < start:  # a negative end before start: valid in general, beyond this short file
        raise _end_back_before_start(file, start, end, total)
    if last > total:
        warnings.append(("w.clamped", {"end": last, "total": total}))
        return total
    return last


def _auto_range(ctx, real, text, start, total, warnings):
    """end "auto": the function enclosing start, else a window of 10 before and 20 after (docs/behaviour.md#line-arguments)."""
    language = _language_of(real, text)
    if language is not None:
        found = function_range(text.decode(), language, start)
        if found:
            return found["start"], found["end"]
    warnings.append(("w.auto_window", {"line": start}))
    return max(1, start - AUTO_WINDOW_BEFORE), min(total, start + AUTO_WINDOW_AFTER)


# --- replace (docs/cli.md#replace) ----------------------------------------------------------------


def _strip_one_newline(string):
    return string[:-1] if string.endswith("\n") else string


def tool_replace(ctx, args):
    """Replace lines. Arguments: `file`, `start`/`end` (with optional `old` to check them) or `old`
    alone (found in the file), `content`, `viewed_code_id`, `encoding`, `preview`, `brief`, `format`.
    Result: `start`, `end` (old lines), `removed`, `added`, `total`, `diff`, `balance`, `event_id`."""
    _replace_arguments(args)
    return edit_file(ctx, "replace", args, lambda opened: _replace_change(ctx, args, opened))


def _replace_arguments(args):
    """INVALID_ARGUMENT unless a replace names its lines one way: a target, start (..end), or old."""
    if "target" in args:
        if {"start", "end", "old"} & args.keys():
            raise invalid("target_and_range")
    elif "start" not in args:
        if "end" in args:
            raise invalid("end_without_start")
        if "old" not in args:
            raise invalid("need_lines_or_old")
    if args.get("old") == "" and "start" not in args:  # (with start: an empty line)
        raise ToolError("INVALID_ARGUMENT", "old_empty")
    # (half of a UTF-16 pair, which no file holds: MISMATCH said only "read the file")
    half = re.search("[\ud800-\udfff]", args.get("old") or "")
    if half:
        raise ToolError(
            "INVALID_ARGUMENT", "old_surrogate", "content_surrogate.hint", point=f"{ord(half.group()):04X}"
        )


def _replace_change(ctx, args, opened):
    return _maybe_escaped_twice(ctx, args, _replace_change_of(ctx, args, opened))


def _replace_change_of(ctx, args, opened):
    if "target" in args:  # the lines the target names: a function, an element, a marker line
        start, end = resolve_target(ctx, opened, args["target"])
        if not args.get("force"):
            _refuse_body_only(opened, args, start, end)
        return _replace_lines(ctx, dict(args, start=start, end=end), opened)
    if "old" in args:
        prefixed = _replace_prefixed(ctx, args, opened)
        if prefixed is not None:
            return prefixed
    if "start" in args:
        return _replace_lines(ctx, args, opened)
    return _replace_old(ctx, args, opened)


def _refuse_body_only(opened, args, start, end):
    """INVALID_ARGUMENT for content replacing a function by target whose first line is indented
    deeper than the function's definition line (the first line of its range that names it, not a
    comment): its body alone, which would delete that line (`def add(...)`, `function greet() {`
    and its `}` went, status ok)."""
    target = _as_target("target", args["target"])
    first = next((line for line in str(args.get("content") or "").split("\n") if line.strip()), None)
    if target["kind"] != "function" or first is None or start == end:
        return
    found = _definition_line(opened, _last_part(str(target["value"])), start, end)
    if found is None:
        return
    number, line = found
    depth = len(line) - len(line.lstrip(" \t"))
    if first[:depth] == line[:depth] and first[depth : depth + 1] in (" ", "\t"):
        fields = {"file": opened.file, "start": number, "end": end, "first": _show(line.strip())}
        raise ToolError("INVALID_ARGUMENT", "content_body_only", **fields)


def _definition_line(opened, name, start, end):
    """(number, text) of the first line of lines start..end that names `name` and is no comment
    line (a function's definition line, below its comments and attributes), or None."""
    named = re.compile(rf"(?<![\w$]){re.escape(name)}\b")
    for number in range(start, end + 1):
        line = _line_text(opened.text, number).rstrip("\r\n")
        if named.search(line) and not line.lstrip().startswith(("//", "#", "/*", "*", "--", ";")):
            return number, line
    return None


def _maybe_escaped_twice(ctx, args, change):
    """`change` with a warning when the content looks escaped twice (no line break, `\\n`
    outside strings): one line of replace or insert is written as sent (real code holds `\\n`
    more often than a model's newlines arrive escaped), but the caller is told how to fix it (on
    the command line, `-c 'a\\nb'` in single quotes is two characters: `$'...'` is a newline)."""
    content = args.get("content") or ""
    several = (
        change.fields.get("removed", 0) > 1 and "\n" not in content
    )  # (lines made one: a `\\n` says why)
    if (
        _lines_escaped_twice(content)
        or several
        and "\\n" in _BACKQUOTED.sub("", _QUOTED_STRING.sub("", content))
    ):
        change.warnings.append(("w.escaped_twice", {"count": content.count("\\n")}))
    return change


def _old_at_lines(opened, old, lines_text, start, end):
    """MISMATCH unless `old` is the text of lines start..end (`lines_text`), line endings aside."""
    current = _strip_one_newline(normalize_newlines(lines_text))
    wanted = _strip_one_newline(normalize_newlines(old))
    if wanted.endswith("\r") and lines_text.endswith("\r\n") and not current.endswith("\r"):
        wanted = wanted[:-1]  # (old kept the CR of its last CRLF line: that is its line ending)
    if current != wanted:
        raise _lines_mismatch(opened, old, current, wanted, start, end)


_BACKQUOTED = _LazyPattern(r"`[^`\n]*`")


def _lines_escaped_twice(content):
    """looks_double_escaped, and, outside quotes and backquotes (template literals, Markdown code),
    at least two of the pieces after a `\\n` hold a letter or a digit: lines of code, not a regular
    expression's `/\\n\\n+/` or `s/\\n+/\\n/g`."""
    if not looks_double_escaped(content):
        return False
    pieces = _BACKQUOTED.sub("", _QUOTED_STRING.sub("", content)).split("\\n")[1:]
    return sum(bool(_ALNUM_TEXT.search(piece)) for piece in pieces) >= 2


def _replace_lines(ctx, args, opened):
    file, text = opened.file, opened.text
    body = text.body
    total = text.total()
    if "target" not in args and "old" not in args:
        _lines_addressable(opened)
    sent, end = _edit_range(args, total, file)
    start, end, warnings, moved = _viewed_lines(ctx, args, opened, sent, end, "target" in args)
    a, b = line_span(body, start, end)
    if "old" in args:
        _old_at_lines(opened, args["old"], body[a:b].decode(text.codec), start, end)
    content = args["content"]
    if "old" not in args and not _tab_separated(opened.real):  # (with old, _replace_prefixed took them off)
        # (the prefixes number the lines as read: from the line sent, before its view moved it)
        content, said = _content_without_prefixes(content, sent, body[a:b].decode(text.codec))
        warnings += [("w.content_prefixes", {"start": sent})] if said else []
    placeholder_guard(args, opened, content, body[a:b].decode(text.codec))
    eol = dominant_eol(body)
    lines = content_lines(_no_second_bom(text, a, content), body)
    block = encode_block(text, lines, eol)
    plan = splice_plan(body, a, b, block, eol)
    fields = {"start": start, "end": end, "removed": end - start + 1, "added": len(lines)}
    if moved:
        fields["relocated"] = moved
    if "old" not in args and lines:  # (old checked the lines: the agent knows what it replaces)
        warnings += _edges_repeated(text, (start, end), lines, total)
    return Change(text, plan, start, end, len(lines), fields, warnings, at=a, raw=(a, block, b))


def _edges_repeated(text, lines_replaced, lines, total):
    """Warnings for a content whose last line is the line right after the replaced lines, or whose
    first is the one right before (a line with six or more characters, a letter or a digit): a
    range one line off, whose edge line now stands twice."""
    start, end = lines_replaced
    said = []
    for key, edge, line, inside in (
        ("w.last_line_repeated", lines[-1], end + 1, end),
        ("w.first_line_repeated", lines[0], start - 1, start),
    ):
        if (
            not 1 <= line <= total
            or len(edge.strip()) < 6
            or not _ALNUM_TEXT.search(edge)
            or _CLOSER.match(edge)
        ):
            continue
        beside, replaced = (_line_text(text, n).strip() for n in (line, inside))
        if beside == edge.strip() != replaced:  # (a line the file held twice already is no news)
            said.append((key, {"text": _show(edge.strip()), "line": line, "start": start, "end": end}))
    return said


# a line that closes a block (`</div>`, `#endif`, `\end{x}`, `end`, `}`): nested blocks repeat it
_CLOSER = _LazyPattern(r"\s*(?:</|#\s*end|\\end\b|(?:end|fi|done|esac)\b|[\])}])")


def _line_text(text, line):
    a, b = line_span(text.body, line, line)
    return text.body[a:b].decode(text.codec)


_READ_PREFIX = _LazyPattern(r"([0-9]{1,15})\t(.*)")


def _where_old_is(opened, old, asked=None):
    """(found_at, closest) of `old` in the file; an empty old names an empty line (it "occurred"
    at every character before). No closest when old stands at several places: its retry token
    would pick one of identical blocks, maybe not the one meant."""
    if _strip_one_newline(normalize_newlines(old)):
        _tier, spans = locate_old(opened.normalized(), old)
        closest = closest_of(opened, old, asked) if len(spans) < 2 else None
        return _places([(s[0], s[2]) for s in spans]), closest
    empty = [n for n, line in enumerate(_file_lines(opened), 1) if not line.rstrip()]
    return _places([(n, n) for n in empty]), None


def _lines_mismatch(opened, old, current, wanted, start, end):
    """MISMATCH of lines start..end that do not hold `old` (`current`, `wanted`: both normalized):
    `actual`, where old does occur (`found_at`) and the block most like it (`closest`), unless the
    lines were changed where old was copied from (_changed_in_place): then no candidate elsewhere,
    which would be other code (docs/cli.md#replace)."""
    found_at, closest = _where_old_is(opened, old, (start, end))
    data = {"actual": current, "found_at": found_at, "closest": closest}
    then = wanted.split("\n")
    stands = _changed_in_place(current.split("\n"), then)
    elsewhere = [one["start"] for one in found_at + [closest or {"start": start}] if one["start"] != start]
    if stands is not None and elsewhere:
        data.update(found_at=[], closest=None)
        fields = {"text": _show(then[stands].strip()), "at": start + stands}
        return ToolError(
            "MISMATCH", "mismatch_in_place", data=data, file=opened.file, start=start, end=end, **fields
        )
    hint = "mismatch_lines_closest.hint" if closest else "mismatch_lines_nowhere.hint"
    hint = "mismatch_lines.hint" if found_at else hint
    hint, fields = _mismatch_lines_hint(opened, found_at, (start, end, wanted), hint)
    return ToolError(
        "MISMATCH", "mismatch_lines", hint, data=data, file=opened.file, start=start, end=end, **fields
    )


def _mismatch_lines_hint(opened, found_at, asked, hint):
    """(hint, its fields) of lines start..end that do not hold old (`asked`: start, end, old
    normalized), where old stands once in the file: as the whole lines from start to a later end
    (pass that end), or inside those lines, not their whole text (leave start out); else `hint`.
    Each says what to do only where doing it works."""
    (start, end, wanted), body = asked, opened.text.body
    if not found_at or not wanted.strip():  # (a blank old "occurs" at the blank lines)
        return hint, {}
    if len(found_at) > 1:  # (leaving start out would be AMBIGUOUS: only what start asks is said)
        return _inside_lines_hint(found_at, start, end, hint)
    one = found_at[0]
    if one["start"] == start and one["end"] > end:
        a, b = line_span(body, start, one["end"])
        whole = _strip_one_newline(normalize_newlines(body[a:b].decode(opened.text.codec)))
        return ("mismatch_lines_longer.hint", {"last": one["end"]}) if whole == wanted else (hint, {})
    if start <= one["start"] and one["end"] <= end:
        return "mismatch_lines_part.hint", {}
    return hint, {}


def _inside_lines_hint(found_at, start, end, hint):
    """(hint, its fields) of lines start..end that hold `old` at several places, none their whole
    text: what start asks of old; else `hint`."""
    whole = getattr(found_at, "found", len(found_at)) == len(found_at)  # (a cut list says not where all are)
    inside = whole and all(start <= place["start"] and place["end"] <= end for place in found_at)
    return ("mismatch_lines_inside.hint", {"count": len(found_at)}) if inside else (hint, {})


def _read_prefixed(old):
    """(first line number, text) when every line of `old` carries the `N<TAB>` prefix of a read,
    numbered one after another; else None."""
    lines = _strip_one_newline(normalize_newlines(old)).split("\n")
    matches = [_READ_PREFIX.fullmatch(line) for line in lines]
    if not all(matches):
        return None
    first = int(matches[0].group(1))
    if [int(m.group(1)) for m in matches] != list(range(first, first + len(lines))):
        return None
    return first, "\n".join(m.group(2) for m in matches)


def _replace_prefixed(ctx, args, opened):
    """`old` copied with its read prefixes: applied when the text sits at the lines they name, and
    `old` itself, prefixes and all, is nowhere in the file (a file of `N<TAB>text` lines). When the
    text stands elsewhere too, the prefixes alone, from a read that may be older than an edit, do
    not pick the place: AMBIGUOUS, unless `start` or a viewed_code_id says the lines are those read."""
    found = _read_prefixed(args["old"])
    if found is None or normalize_newlines(args["old"]) in opened.normalized():
        return None
    first, stripped = found
    last = first + stripped.count("\n")
    if "start" in args and (args["start"], args.get("end", args["start"])) != (first, last):
        return None
    total = opened.text.total()
    if last > total:
        return None
    a, b = line_span(opened.text.body, first, last)
    current = _strip_one_newline(normalize_newlines(opened.text.body[a:b].decode(opened.text.codec)))
    # (with a view, its lines may have moved: _replace_lines follows them and checks old there)
    if current != stripped and args.get("viewed_code_id") is None:
        return None
    if "start" not in args and args.get("viewed_code_id") is None:
        _prefixes_pick_one(opened, stripped, first, last)
    content, key = _content_unprefixed(args["content"], first, stripped)
    change = _replace_lines(ctx, dict(args, start=first, end=last, old=stripped, content=content), opened)
    change.warnings.append((key, {"start": first, "end": last}))
    return change


def _prefixes_pick_one(opened, stripped, first, last):
    """AMBIGUOUS (`ambiguous_prefixed`) when the text of a prefixed `old` stands as whole lines at
    more than one place: the prefixes alone, from a read that may be older than an edit, do not
    pick one."""
    spans = _whole_lines_at(opened.normalized(), stripped)
    if len(spans) > 1:
        ambiguous = _not_one_old(opened, stripped, spans)
        raise ToolError(
            "AMBIGUOUS", "ambiguous_prefixed", data=ambiguous.data, start=first, end=last, **ambiguous.fields
        )


def _whole_lines_at(norm, lines):
    """The spans (first line, 0, last line, -1) where `lines` stand as whole lines of the text
    `norm` (LF line ends): a read prefix shows whole lines, so text inside a longer line is not
    one of its places."""
    wrapped, count = "\n" + norm + "\n", lines.count("\n")  # (line 1 of `norm` is line 2 here)
    starts = [at + 1 for at in find_all(wrapped, "\n" + lines + "\n")]
    return [(line - 1, 0, line - 1 + count, -1) for line, *_rest in _spans_of(wrapped, starts, len(lines))]


def _tab_separated(path):
    """Whether `path` names a table of tab-separated values (.tsv, .tab): a row `2<TAB>bob` put at
    line 2 is data, a first column of ids, not a read's prefix (the file has no other sign)."""
    return os.path.splitext(path)[1].lower() in (".tsv", ".tab")


def _content_unprefixed(content, first, lines):
    """(content, warning key) of a replace whose `old` carried read prefixes from line `first`."""
    content, said = _content_without_prefixes(content, first, lines)
    return content, "w.read_prefixes_content" if said else "w.read_prefixes"


def _content_without_prefixes(content, first, lines):
    """(content, whether prefixes were taken off): a content copied from a read, each line prefixed
    and numbered on from `first` (the first line it replaces), without its prefixes; unless one of
    the file's `lines` there starts with a number and a tab itself (a column of ids: a row `2<TAB>bob`
    of a table with a header line, rewritten as `3<TAB>bob`, lost its id)."""
    found = _read_prefixed(content) if content else None
    if found is None or found[0] != first or any(_READ_PREFIX.match(line) for line in lines.split("\n")):
        return content, False
    return found[1] + ("\n" if content.endswith(("\n", "\r")) else ""), True


def _not_one_old(opened, old, spans):
    """AMBIGUOUS naming the places `old` stands (`spans`), or, none, MISMATCH."""
    if not spans:
        return _no_match(opened.file, opened.normalized(), old, opened)
    where = ", ".join(f"{s[0]}-{s[2]}" if s[2] != s[0] else str(s[0]) for s in spans[:20])
    candidates = _places([(s[0], s[2]) for s in spans])
    return ToolError(
        "AMBIGUOUS",
        "ambiguous",
        data={"candidates": candidates},
        file=opened.file,
        count=len(spans),
        where=where,
    )


def _the_one_with_crlf(raw, old, spans):
    """Of the places `old` stands once line endings are set aside (`spans`), the one where it
    stands byte for byte, CRLF and all, when there is exactly one such; else all of them (an
    `old` copied with its CRLF from a file of mixed line endings was AMBIGUOUS with its LF twin)."""
    hits = find_all(raw, old)
    if len(hits) != 1:
        return spans
    line = raw.count("\n", 0, hits[0]) + 1
    column = hits[0] - (raw.rfind("\n", 0, hits[0]) + 1)
    return [span for span in spans if span[:2] == (line, column)] or spans


def _replace_old(ctx, args, opened):
    text = opened.text
    body = text.body
    norm = opened.normalized()
    tier, spans = locate_old(norm, args["old"])
    if len(spans) > 1 and tier == "exact" and "\r" in args["old"]:
        spans = _the_one_with_crlf(text.decode(), args["old"], spans)
    if len(spans) > 1 and not args.get("force"):
        spans = _whole_word_spans(norm, spans)
    if len(spans) != 1:
        raise _not_one_old(opened, args["old"], spans)
    line_s, col_s, line_e, col_e = spans[0]
    warnings, moved = check_view(ctx, args, opened, line_s, line_e, now=(True, True))
    if tier == "loose":
        warnings.append(("w.whitespace_match", {"start": line_s, "end": line_e}))
    a, b = line_span(body, line_s, line_e)
    replaced = body[a:b].decode(text.codec)
    region = split_decoded(replaced)
    if not args.get("force"):
        _refuse_cut_word(opened.file, region, spans[0])
    eol = dominant_eol(body).decode()
    content = _no_second_bom(text, a + col_s, args["content"])  # (at the start of a file with a BOM)
    replacement = _match_trailing_newline(content_newlines(content, body), col_e == -1).replace("\n", eol)
    as_sent = replacement
    replacement = _indented_once(region[0][0], col_s, replacement, args["old"], warnings, line_s)
    new_region = replace_in_lines(region, col_s, col_e, replacement)
    placeholder_guard(args, opened, args["content"], replaced, cut=(args["content"], args["old"]))
    head = region[0][0][:col_s]

    def readings():  # (the file as content is written, and as content relative to `old` would be)
        relative = as_sent.replace("\n", "\n" + head).replace("\n" + head + "\n", "\n\n")
        around = (body[:a].decode(text.codec), body[b:].decode(text.codec))
        return [
            around[0] + replace_in_lines(region, col_s, col_e, r) + around[1] for r in (replacement, relative)
        ]

    _refuse_relative_lines(args, opened, head, as_sent, line_s, readings)
    plan, raw = _region_plans(text, (a, b), new_region, replacement, eol)
    added = len(split_decoded(new_region))
    fields = {"start": line_s, "end": line_e, "removed": line_e - line_s + 1, "added": added}
    if moved:
        fields["relocated"] = moved
    return Change(text, plan, line_s, line_e, added, fields, warnings, at=a, raw=raw)


def _region_plans(text, span, new_region, replacement, eol):
    """(plan, raw) of the whole lines `span` (a, b) of a replace by `old`, now `new_region`: the
    bytes as written, and the same lines each terminated (a be-edit applies the final-newline rule
    once to all its items). No lines left: deleted, at the end of a file without a final newline
    as delete does."""
    a, b = span
    if not new_region:
        return splice_plan(text.body, a, b, b"", eol.encode()), (a, b"", b)
    plan = (a, text.encode(new_region, new=replacement), b)
    if new_region.endswith("\n"):  # (at the end of a file without a final newline, content ending in
        at_end = b == len(text.body) and not text.body.endswith(b"\n")  # one gives it one: no
        return plan, None if at_end else plan  # whole-line form of that, the bytes go as they are)
    return plan, (a, text.encode(new_region + eol, new=replacement), b)


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _refuse_cut_word(file, region, span):
    """MISMATCH when the one place `old` stands (`span` of the lines `region`) starts or ends inside
    a number or a word (_inside_word; ASCII: CJK text has no spaces between words): `port: 80`
    found in `port: 8080` would turn it into `port: 44380` (docs/cli.md#replace)."""
    line_s, col_s, line_e, col_e = span
    first, last = region[0][0], region[-1][0]
    if _inside_word(first, col_s):
        one_line_end = col_e if line_e == line_s and col_e is not None and col_e >= 0 else len(first)
        line, text, cut, ours = line_s, first, col_s, (col_s, one_line_end)
    elif col_e is not None and _inside_word(last, col_e):
        line, text, cut, ours = line_e, last, col_e, (col_s if line_e == line_s else 0, col_e)
    else:
        return
    a, b = _word_around(text, cut)
    place = {"start": line_s, "end": line_e}
    raise ToolError(
        "MISMATCH",
        "old_in_word",
        data=dict(place, actual=text, found_at=[place], closest=None),  # (the one place, cut)
        file=file,
        line=line,
        ours=text[max(a, ours[0]) : min(b, ours[1])],
        word=text[a:b],
    )


def _whole_word_spans(norm, spans):
    """Of the places `old` stands in the text `norm` (`spans`), those that neither start nor end
    inside a word, when some do not and some do; else all: a match inside a word is a guess
    (_refuse_cut_word), so `line 1` is the line `line 1`, not also `line 10` and `line 11`."""
    lines = norm.split("\n")
    whole = [
        (line_s, col_s, line_e, col_e)
        for line_s, col_s, line_e, col_e in spans
        if not _inside_word(lines[line_s - 1], col_s)
        and not (col_e is not None and _inside_word(lines[line_e - 1], col_e))
    ]
    return whole or spans


def _inside_word(text, at):
    """Whether offset `at` of `text` is inside a number (digits on both sides) or a name (letters and
    `_` on both sides: `HOST=` found in `DB_HOST=` edited another key): `v|1.2.3`, `python|3.11`
    and an escape's letter (`\\n|Line`, `%d|ms`) are edges."""
    if not 0 < at < len(text) or at > 1 and text[at - 2] in "\\%":
        return False
    return _WORD_INSIDE.fullmatch(text[at - 1 : at + 1]) is not None


_WORD_INSIDE = _LazyPattern(r"[0-9]{2}|[A-Za-z_]{2}")  # (`DB_|HOST`, `Connect|Timeout`: inside)


def _word_around(text, at):
    """(start, end) of the run of word characters in `text` around the offset `at`."""
    a = b = at
    while a > 0 and text[a - 1] in _WORD_CHARS:
        a -= 1
    while b < len(text) and text[b] in _WORD_CHARS:
        b += 1
    return a, b


def _indented_once(first_text, col_s, replacement, old, warnings, line):
    """`replacement` without the indentation its first line repeats: `old` began at the first
    non-blank character of its line, or inside its indentation, and the content's first line
    begins with the line's whole indentation (copied as a whole line), part of which would
    otherwise stand twice. Not when the content is `old` itself with more indentation in front:
    then the indentation is what is meant to change."""
    head, indent = first_text[:col_s], _lead(first_text)
    if (
        not head
        or len(head) > len(indent)
        or indent == first_text
        or not replacement.startswith(indent)
        or _strip_one_newline(normalize_newlines(replacement[len(head) :]))
        == _strip_one_newline(normalize_newlines(old))
    ):
        return replacement
    key = "w.indent_once" if head == indent else "w.indent_once_inside"
    warnings.append((key, {"line": line}))
    return replacement[len(head) :]


def _refuse_relative_lines(args, opened, head, replacement, line, readings):
    """INVALID_ARGUMENT, unless `force`, when `old` began at the first non-blank character of its
    line (after the indentation `head`), content's first line has no indentation (written after
    `head`) and a later line of it is not indented by `head` at least, in a language whose blocks
    are made by indentation: `old: "x = 1"`, `content: "if x:\n    x = 2"` put the `if` inside the
    block and its body outside. Which of the two readings content meant (relative to `old`, or
    lines as they are) cannot be told, so neither is guessed. Not when `old` has lines of its own
    after its first (they stand at their whole indentation: content's are read so too), nor for a
    Python line inside a string or brackets of content (`sql = \"\"\"` then `SELECT 1` at column 0)."""
    old = _strip_one_newline(normalize_newlines(args["old"]))
    if (
        args.get("force")
        or not head
        or head.strip()
        or replacement[:1] in (" ", "\t", "\r", "\n")
        or "\n" in old
    ):
        return
    language = _language_of(opened.real, opened.text)
    if language not in _OFFSIDE:
        return
    number = _first_line_outside(replacement.replace("\r\n", "\n"), head, language)
    if number is not None and not (language == "python" and _only_first_parses(*readings())):
        raise ToolError(
            "INVALID_ARGUMENT", "content_relative_indent", file=opened.file, line=line, content_line=number
        )


def _only_first_parses(given, relative):
    """Whether the Python text `given` parses and `relative` does not (then content as given is
    what was meant: the other reading is no program). Files over 2 MB are not parsed."""
    import ast

    results = []
    for source in (given, relative):
        if len(source) > 2 << 20:
            return False
        try:
            ast.parse(source)
            results.append(True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            results.append(False)
    return results == [True, False]


def _first_line_outside(text, head, language):
    """The number of the first line after the first of `text` that has a letter or more and is not
    indented by `head`, outside a Python string or brackets of `text`; or None."""
    spans = _python_spans(text, 0, len(text)) if language == "python" else []
    starts, at = [s for s, _ in spans], 0
    for number, text_line in enumerate(text.split("\n"), 1):
        at_line, at = at, at + len(text_line) + 1
        if (
            number > 1
            and text_line.strip()
            and not text_line.startswith(head)
            and not _inside(spans, starts, at_line)
        ):
            return number
    return None


_OFFSIDE = frozenset(("python", "yaml", "haskell"))  # (languages whose blocks are made by indentation)


def _match_trailing_newline(content, old_ends_a_line):
    """Give `content` the trailing newline `old` had, so lines neither merge nor split.

    `old` that ends with a newline covers whole lines: content without one still ends its line
    (unless it is "", which deletes those lines). `old` that stops inside a line gets content
    without a trailing newline, or a newline would be inserted mid-line.
    """
    if old_ends_a_line and content and not content.endswith("\n"):
        return content + "\n"
    if not old_ends_a_line and content.endswith("\n"):
        return content[:-1]
    return content


def placeholder_guard(args, opened, content, replaced, cut=None, insert=False, patch=False):
    """PLACEHOLDER when `content` has a line standing in for kept code ("// ... existing code ...")
    that `replaced` does not hold, or when the text standing in place of a text (`cut`: the pair,
    by default `content` and `replaced`; a replace by old: content and old, as the rest of its lines
    stays) was built from a long line shown cut (find_cut_line); unless `force`
    (docs/cli.md#replace). In documentation and plain text (where examples use "// ..." in
    earnest) and in content that keeps every line it replaces, only explicit phrases count; in an
    `insert`, which deletes nothing (a heading "// Existing tests" above new code is no stand-in
    there), only lines with an ellipsis."""
    if args.get("force") or not content:
        return
    language = (
        _language_of(opened.real, opened.text) if opened.text.body else detect_language(opened.real, "")
    )
    strong_only = _prose_file(opened.real, language) or _keeps_every_line(content, replaced)
    _refuse_placeholder(content, replaced, strong_only, insert)
    _refuse_cut(*(cut or (content, replaced)))
    if language not in _NOT_CODE and not patch:  # (a hunk's lines are the diff's own: never wrapped)
        _refuse_wrapped(opened, language, content)


# Code the scanners do not know but whose comments are code's (TeX `%`, PHP, R, Lisp `;`...; and
# Makefiles, _MAKEFILE): a weak placeholder sign counts there as in known languages (plain text and
# unknown files: strong only).
_COMMENTED_CODE = (
    *(
        "." + extension
        for extension in "tex sty cls ltx dtx bib php phtml scala sc groovy gradle r ps1 psm1 el lisp clj cljs edn erl "
        "hrl ex exs vim jl nim zig sol proto graphql gql tf hcl nix cmake fs fsx ml mli elm coffee pas pp m mm f90 "
        "f95 ada adb ads asm s bat cmd ini cfg conf properties".split()
    ),
    "/dockerfile",
    "/cmakelists.txt",
)


def _prose_file(real, language):
    """Whether a file holds documentation or plain text, where `// ...` is shown in earnest:
    Markdown, or a language the scanners do not know and no extension of code (_COMMENTED_CODE)."""
    if language == "markdown":
        return True
    return (
        language is None
        and not real.lower().endswith(_COMMENTED_CODE)
        and not _MAKEFILE.fullmatch(os.path.basename(real))
    )


def _refuse_placeholder(content, replaced, strong_only, insert):
    """PLACEHOLDER when a line of `content` stands in for kept code (find_placeholder)."""
    found = find_placeholder(content, replaced, docs=strong_only, insert=insert)
    if found is not None:
        line, text = found
        key = "placeholder_insert" if insert else "placeholder"
        raise ToolError(
            "PLACEHOLDER", key, "placeholder.hint", data={"line": line, "text": text}, line=line, text=text
        )


def _refuse_cut(content, replaced):
    """PLACEHOLDER when `content` was built from a long line of `replaced` shown cut (find_cut_line)."""
    cut = find_cut_line(content, replaced)
    if cut is not None:
        raise ToolError("PLACEHOLDER", "cut_line", data={"line": cut[0]}, line=cut[0], length=cut[1])


_NOT_CODE = (None, "markdown", "html", "xml", "vue", "svelte")  # (where fences or `1<TAB>` may be text)
_WRAP_FENCE = _LazyPattern(r"(```|~~~)[^`]*")
_WRAP_FENCE_LINE = _LazyPattern(r"^[ \t]*(?:```|~~~)", re.M)


def _refuse_wrapped(opened, language, content):
    """INVALID_ARGUMENT when `content` for a file of code carries what came around the code on the
    agent's side and the file holds nothing like it: a Markdown fence around it (at column 0: an
    indented one is a docstring's; not in shell, whose here-documents write Markdown), the
    `N<TAB>` prefixes of a read on every line (not in SQL, whose COPY rows look so), or the signs
    of a diff whose '-' lines stand in the file, in a file that holds no diff itself (a test's
    fixture). The file's text (`opened.normalized()`) is decoded only when a check needs it."""
    lines = _strip_one_newline(normalize_newlines(content)).split("\n")

    def file_holds(pattern):
        return pattern.search(opened.normalized()) is not None

    if language != "shell" and _fenced(lines) and not file_holds(_WRAP_FENCE_LINE):
        fields = {"first": lines[0], "closing": lines[-1], "last": len(lines)}
        raise ToolError("INVALID_ARGUMENT", "content_fenced", file=opened.file, **fields)
    _refuse_other_formats(opened, language, lines)
    prefixed = _read_prefixed(content) if language != "sql" else None
    if prefixed and not file_holds(_READ_PREFIXED_LINE):
        first, last = prefixed[0], prefixed[0] + len(lines) - 1
        raise ToolError("INVALID_ARGUMENT", "content_prefixed", file=opened.file, first=first, last=last)
    if _is_diff(lines, lambda: {line.strip() for line in opened.normalized().split("\n")}):
        if not file_holds(_DIFF_HEADER):
            raise ToolError("INVALID_ARGUMENT", "content_diff", file=opened.file)


# A SEARCH/REPLACE block (another tool's edit format) or a merge conflict, whole: its markers.
_MERGE_MARKERS = _LazyPattern(
    r"^(<{7}(?: [^\n]*)?)\n(?:[^\n]*\n)*?={7}\n(?:[^\n]*\n)*?>{7}(?: [^\n]*)?$", re.M
)


def _refuse_other_formats(opened, language, lines):
    """INVALID_ARGUMENT (as _refuse_wrapped) for content `lines` ending in a Markdown fence's closing
    line whose opening one is not there, or holding a whole SEARCH/REPLACE block or merge conflict
    (another tool's edit format), in a file holding no such lines."""
    if language != "shell" and len(lines) > 1 and lines[-1].strip() in ("```", "~~~"):
        opened_fence = any(_WRAP_FENCE_LINE.match(line) for line in lines[:-1])
        if not opened_fence and not _WRAP_FENCE_LINE.search(opened.normalized()):
            closing, last = lines[-1], len(lines)
            raise ToolError(
                "INVALID_ARGUMENT", "content_fence_end", file=opened.file, closing=closing, last=last
            )
    marker = _MERGE_MARKERS.search("\n".join(lines)) if language != "shell" else None  # (a test's fixture)
    if marker and not _MERGE_MARKERS.search(opened.normalized()):
        raise ToolError("INVALID_ARGUMENT", "content_markers", file=opened.file, marker=marker.group(1))


def _fenced(lines):
    """Whether `lines` open with a Markdown fence at column 0 and close with the same one."""
    fence = _WRAP_FENCE.fullmatch(lines[0])
    return bool(fence) and len(lines) > 1 and lines[-1].strip() == fence.group(1)


_DIFF_HEADER = _LazyPattern(  # (a hunk's header, or a file header pair: not a lone `--- doc` comment;
    r"^[ \t]*(?:@@ -[0-9]+(?:,[0-9]+)? \+[0-9]|--- \S[^\n]*\n[ \t]*\+\+\+ \S"  # a context diff's
    r"|\*\*\* \S[^\n]*\n[ \t]*--- \S|\*{15}[ \t]*$)",  # `*** a` / `--- b` pair, its `***************`)
    re.M,
)


_READ_PREFIXED_LINE = _LazyPattern(r"^[0-9]{1,15}\t", re.M)


def _is_diff(lines, file_lines):
    """Whether `lines` are a diff's: each empty or starting with '+', '-', ' ' or '@@', some '+'
    and some '-', and each '-' line (with a letter or a digit) standing in the file (`file_lines()`,
    a set of stripped lines)."""
    signs = {"@@" if line.startswith("@@") else line[:1] for line in lines}
    if len(lines) < 2 or not {"+", "-"} <= signs <= {"", "+", "-", " ", "@@"}:
        return False
    removed = [line[1:].strip() for line in lines if line[:1] == "-" and _ALNUM_TEXT.search(line)]
    return bool(removed) and all(line in file_lines() for line in removed)


def _keeps_every_line(content, replaced):
    """Whether `content` still holds every line of the text it replaces that has a letter or a
    digit: nothing is deleted, so a heading such as `// existing tests` stands for nothing gone."""
    wanted = {line.strip() for line in replaced.split("\n") if _ALNUM_TEXT.search(line)}
    return bool(wanted) and wanted <= {line.strip() for line in content.split("\n")}


def closest_of(opened, old, asked=None, inside=False):
    """`closest` of a MISMATCH (docs/behaviour.md#errors): the block most like `old`, with the
    viewed_code_id of that block so a corrected retry needs no read. A block that stands at several
    places is the one at the lines `asked` (start, end) when they hold it, else has no token (it
    would pick the first, maybe not the one meant). None when nothing is similar. `inside`: old
    was searched for (closest_block's)."""
    old_lines = _strip_one_newline(normalize_newlines(old)).split("\n")
    found = closest_block(_file_lines(opened), old_lines, inside)
    if found is not None:
        body, total = opened.text.body, opened.text.total()
        a, b = line_span(body, found["start"], found["end"])
        if body.count(body[a:b]) > 1:
            there = line_span(body, *asked) if asked else None
            if there is None or body[there[0] : there[1]] != body[a:b]:
                return found
            shift = asked[0] - found["start"]
            found.update(start=asked[0], end=asked[1])
            if found.get("first_difference"):
                found["first_difference"]["line"] += shift
            a, b = there
        unique = (body, a, view_unique(body, body[a:b], a))
        found["viewed_code_id"] = make_view_id(
            opened.real, found["start"], found["end"], body[a:b], total, unique
        )
    return found


def _no_match(file, norm, old, opened):
    lines = norm.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    closest = closest_of(opened, old, inside=True)  # (a search: old may start inside a line)
    if closest is not None:
        start, end = closest["start"], closest["end"]
        data = {"actual": "\n".join(lines[start - 1 : end]), "start": start, "end": end}
        data.update(found_at=[], closest=closest)
        hint = "mismatch_closest.hint" if "viewed_code_id" in closest else "mismatch_closest_twins.hint"
        return ToolError("MISMATCH", "mismatch_none", hint, data=data, file=file)
    return ToolError(  # (nothing in the file is at least half like old: one shape, no guess)
        "MISMATCH",
        "mismatch_none",
        "mismatch_none_nohint.hint",
        data={"found_at": [], "closest": None},
        file=file,
    )


# --- insert (docs/cli.md#insert) ------------------------------------------------------------------


def tool_insert(ctx, args):
    """Insert lines. Arguments: `file`, `after_line` (0 = before line 1, -1 = at the end), `content`,
    `viewed_code_id`, `encoding`, `preview`, `brief`, `format`. Result: `after_line`, `added`,
    `total`, `diff`, `balance`, `event_id`."""
    _insert_arguments(args)
    return edit_file(ctx, "insert", args, lambda opened: _insert_change(ctx, args, opened))


def _insert_arguments(args):
    if args["after_line"] < -1:
        raise invalid("after_line_invalid", value=args["after_line"])
    if args["content"] == "":
        raise ToolError("INVALID_ARGUMENT", "content_empty")


def _insert_change(ctx, args, opened):
    file, text = opened.file, opened.text
    body = text.body
    total = text.total()
    _lines_addressable(opened)
    from_end = args["after_line"] == -1  # (the end of the file as it is now)
    after = total if from_end else args["after_line"]
    if after > _view_lines(args, total):
        raise _after_out_of_range(file, after, total)
    warnings, moved = check_view(ctx, args, opened, after, after + 1, now=(from_end, from_end), insert=True)
    after += 0 if from_end else moved
    if after > total:
        raise _after_out_of_range(file, after, total)
    placeholder_guard(args, opened, args["content"], "", insert=True)
    eol = _insert_eol(args, body)
    a = line_start(body, after + 1)
    lines = content_lines(_no_second_bom(text, a, args["content"]), body)
    block = encode_block(text, lines, eol)
    if not body and args.get("as_given") and not normalize_newlines(args["content"]).endswith("\n"):
        block = block[: len(block) - len(eol)]  # (a chip into an empty file ends as its text ends)
    plan = splice_plan(body, a, a, block, eol)
    fields = {"after_line": after, "added": len(lines)}
    if moved:
        fields["relocated"] = moved
    change = Change(text, plan, after + 1, after, len(lines), fields, warnings, at=a, raw=(a, block, a))
    return _maybe_escaped_twice(ctx, args, change)


def _insert_eol(args, body):
    """The line ending of inserted lines: the file's (dominant_eol); for a chip's text put into a
    file that has none to give it, its own (byte for byte: `a\r\nb\r\n` deleted whole came back
    as `a\nb\n`)."""
    if not args.get("as_given") or b"\n" in body:
        return dominant_eol(body)
    content = args["content"]
    crlf = content.count("\r\n")
    return b"\r\n" if crlf and crlf >= content.count("\n") - crlf else b"\n"


def _after_out_of_range(file, after, total):
    return ToolError(
        "OUT_OF_RANGE", "after_out_of_range", data={"total": total}, file=file, value=after, total=total
    )


# --- delete (docs/cli.md#delete) ------------------------------------------------------------------


def tool_delete(ctx, args):
    """Delete lines. Arguments: `file`, `start`/`end` or `target`, `viewed_code_id`, `force` of the
    balance guard, `encoding`, `preview`, `brief`, `format`. Result: `start`, `end`, `removed`,
    `total`, `diff`, `balance`, `event_id`, `chip` (the deleted text)."""
    _delete_arguments(args)
    return edit_file(ctx, "delete", args, lambda opened: _delete_change(ctx, args, opened))


def _delete_arguments(args):
    if "target" in args and ("start" in args or "end" in args):
        raise invalid("target_and_range")
    if "target" not in args and "start" not in args:
        raise invalid("end_without_start" if "end" in args else "need_range_or_target")


def _delete_change(ctx, args, opened):
    file, text = opened.file, opened.text
    body = text.body
    total = text.total()
    if "target" in args:
        start, end = resolve_target(ctx, opened, args["target"])
    else:
        _lines_addressable(opened)
        start, end = _edit_range(args, total, file)
    start, end, warnings, moved = _viewed_lines(ctx, args, opened, start, end, "target" in args)
    a, b = line_span(body, start, end)
    deleted = body[a:b].decode(text.codec)
    plan = splice_plan(body, a, b, b"", dominant_eol(body))
    fields = {"start": start, "end": end, "removed": end - start + 1}
    if moved:
        fields["relocated"] = moved
    change = Change(text, plan, start, end, 0, fields, warnings, chip_text=deleted, at=a, raw=(a, b"", b))
    change.warnings += _delete_guard(ctx, args, opened, change, start, end)
    return change


def _delete_guard(ctx, args, opened, change, start, end):
    """Refuse to delete a range whose brackets do not balance on their own (unless force).

    A range that is unbalanced alone but whose removal leaves the file no worse (brackets inside a
    multi-line string or comment, say) is not refused: that would be a false alarm.
    """
    file, real, text = opened.file, opened.real, opened.text
    language = _language_of(real, text)
    if language is None:
        return [("w.not_checked_delete", {"file": file})]
    problems = check_balance(change.chip_text, language)["unmatched"]
    change.keep_scan = not args.get("preview")
    if not problems or edit_breaks(opened, change, ctx) == []:
        return []
    symbols = ", ".join(sorted({f'"{p["symbol"]}"' for p in problems}))
    if args.get("force"):
        return [("w.forced_unbalanced", {"symbols": symbols})]
    unmatched = [dict(p, line=p["line"] + start - 1) for p in problems]
    raise ToolError(
        "UNBALANCED", "unbalanced", data={"unmatched": unmatched}, start=start, end=end, symbols=symbols
    )


# --- write (docs/cli.md#write) --------------------------------------------------------------------


def tool_write(ctx, args):
    """Write a whole file (created with its folders, or overwritten keeping encoding, BOM, line
    endings and mode). Arguments: `file`, `content`, `encoding`, `preview`, `brief`. Result:
    `created`, `lines`, `bytes`, `diff` (overwrites), `event_id`."""
    file = args["file"]
    warnings = []
    content = _rescued_content(ctx, args, warnings)
    with locate(ctx, file) as place, lock_file(ctx, place):
        real = place.real
        exists = place.lstat() is not None
        if exists:
            st, raw, text = load_text(ctx, place, args.get("encoding"))
            placeholder_guard(args, Opened(file, real, text), content, text.decode())
            data, new_body = _rewritten_bytes(text, content)
        else:
            st = raw = text = None
            placeholder_guard(args, Opened(file, real, Text(b"")), content, "")
            data, new_body = _new_file_bytes(ctx, args, content)
            warnings += _created_near(place, args.get("preview"))
        changed = not exists or data != raw
        result = {"status": "ok", "file": file, "path": real, "created": not exists, "changed": changed}
        result.update(lines=line_count(new_body), bytes=len(data))
        if exists and not args.get("brief"):
            result["diff"] = _write_diff(file, text, new_body, warnings) if changed else ""
        if args.get("preview"):
            result["preview"] = True
            warnings += _preview_refused(ctx, place, st)
        if not changed:  # (a preview says so too)
            warnings.append(("w.unchanged", {}))
        elif not args.get("preview"):
            warnings += _commit_write(ctx, Opened(file, real, text, place, st, raw), data, result)
    if warnings:
        result["warnings"] = _local_warnings(ctx, warnings)
    return result


def _commit_write(ctx, opened, data, result):
    """A write's commit of the bytes `data` (its event into `result`); its warnings."""
    summary = f"write: {_counted(result['lines'], 'line')}" + (" (created)" if result["created"] else "")
    event_id, warnings = commit_bytes(ctx, "write", opened, payload_of(data), summary)
    _put_event(result, event_id)
    return warnings


def _created_near(place, preview):
    """[a warning] when the file to create looks like a slip for one that exists, else []."""
    near = _near_new_file(place)
    if not near:
        return []
    return [
        ("w.created_near_preview" if preview else "w.created_near", {"file": place.file, "near": _show(near)})
    ]


def _near_new_file(place):
    """For a file to create: the name a slip of the hand would have meant that exists, as the
    caller wrote the path, or None: its first missing folder spelled like a folder beside it but
    for case or one letter (`component/` for `components/`; not `api_v2/` beside `api_v1/`); with
    no folder to make, a file differing only in case, or in an extension of the same language
    (`utils.js` for `utils.ts`; not `main.h` beside `main.c`, nor `.env` beside `.env.example`)."""
    parts = re.split(r"[\\/]" if os.name == "nt" else "/", place.file)
    if place.pending:
        return _near_folder(place, parts)
    like = [one for one in _names_like(place.folder.path, place.name) if _same_kind(place.name, one)]
    like.sort(key=lambda one: one.lower() != place.name.lower())  # (case alone first)
    return "/".join(parts[:-1] + like[:1]) if like else None


def _near_folder(place, parts):
    """_near_new_file of a file whose first missing folder may be a slip for one beside it."""
    try:
        with os.scandir(place.folder.path) as entries:
            folders = [e.name for e in itertools.islice(entries, _NEAR_LOOKS) if e.is_dir()]
    except OSError:
        return None
    near = [name for name in folders if _one_slip(place.pending[0], name)]
    tail = [*near[:1], *place.pending[1:], place.name]
    if (
        not near
        or len(parts) <= len(place.pending)
        or not os.path.exists(os.path.join(place.folder.path, *tail))
    ):
        return None
    return "/".join(parts[: -len(place.pending) - 1] + tail)


_SAME_LANGUAGE = ({".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs"}, {".yml", ".yaml"}, {".htm", ".html"})


def _same_kind(name, other):
    """Whether `other` differs from `name` in case only, or in an extension of the same language."""
    (base, ext), (their_base, their_ext) = os.path.splitext(name.lower()), os.path.splitext(other.lower())
    if base != their_base:
        return False
    return ext == their_ext or any(ext in kind and their_ext in kind for kind in _SAME_LANGUAGE)


def _one_slip(name, other):
    """Whether folder names `name` and `other` differ in case only, or by one letter more or less."""
    a, b = sorted((name.lower(), other.lower()), key=len)
    if a == b:
        return name != other
    if len(b) != len(a) + 1:
        return False
    i = next((k for k in range(len(a)) if a[k] != b[k]), len(a))
    return b[i].isalpha() and a == b[:i] + b[i + 1 :]


def _no_second_bom(text, at, content):
    """`content` without the U+FEFF it starts with when it goes to the start of a file that has a
    BOM (`at` 0): that would be a second BOM (a write drops it the same way)."""
    return content[1:] if at == 0 and text.bom and content.startswith("\ufeff") else content


def _rewritten_bytes(text, content):
    """(bytes, body) of an existing file rewritten with `content`: its encoding, BOM (a U+FEFF
    that starts the content would be a second) and dominant line ending kept."""
    new_body = _rewritten_body(text, _no_second_bom(text, 0, content))
    return text.to_bytes(new_body), new_body


def _rewritten_body(text, content):
    """The body of an existing file rewritten with `content` (a second BOM dropped): its own text
    leaves it as it is, every line ending included; other text gets its dominant line ending."""
    if "\r" in content and content == text.decode():
        return text.body
    eol = dominant_eol(text.body).decode()
    return text.encode(content_newlines(content, text.body).replace("\n", eol))


def _rescued_content(ctx, args, warnings, tool="be-write"):
    """`content` of an edit; over MCP, a double-escaped one unescaped, its original kept as a chip
    (warnings say so)."""
    content = args["content"]
    if not ctx.mcp and _lines_escaped_twice(content):  # (the CLI's content is used as given)
        warnings.append(("w.escaped_twice", {"count": content.count("\\n")}))
    if not (ctx.mcp and looks_double_escaped(content)):
        return content
    if args.get("preview"):
        warnings.append(("w.rescued_preview", {}))
    else:
        chip_id, chip_warnings = ChipStore(ctx).save(tool, dict(args), "", content)
        warnings += chip_warnings
        warnings.append(("w.rescued", {"id": chip_id or "-"}))
    return unescape_content(content)


def _new_file_bytes(ctx, args, content):
    """(bytes, body as UTF-8 for counting lines) of a new file holding `content`."""
    codec = _lookup_codec(args.get("encoding") or ctx.encoding or "utf-8")
    data = Text(b"", codec, codec).encode(content)
    if codec.startswith(("utf-16", "utf-32")):
        return data, content.encode("utf-8", "surrogatepass")
    return data, data


def _write_diff(file, text, new_body, warnings):
    old_lines = split_decoded(text.decode())
    new_lines = split_decoded(new_body.decode(text.codec))
    size = max(len(old_lines), len(new_lines))
    if size > WRITE_DIFF_LINE_LIMIT:
        warnings.append(("w.diff_omitted", {"lines": size, "limit": WRITE_DIFF_LINE_LIMIT}))
        return ""
    return full_diff(file, old_lines, new_lines)


# --- balance, func-range, tag-range (docs/cli.md#balance-func-range-tag-range) --------------------


def tool_balance(ctx, args):
    """Check brackets, quotes and tags. Arguments: `file`, `verbose`, `encoding`. Result: `status`
    (balanced, unbalanced, not_checked), `language`, `unmatched`, `counts`, `pairs` (verbose),
    `reason` (not checked)."""
    file = args["file"]
    try:
        real, text = read_declared(ctx, file, args.get("encoding"))
    except ToolError as exc:
        if exc.code not in ("BINARY_FILE", "ENCODING"):
            raise
        return dict(
            {"file": file, "path": resolve_path(ctx, file)},
            status="not_checked",
            language=None,
            unmatched=[],
            reason=tr(ctx.lang, exc.key, **exc.fields),
        )
    result = {"file": file, "path": real}
    language = _language_of(real, text)
    if language is None:
        reason = tr(ctx.lang, "b.reason_unknown", name=os.path.basename(real))
        return dict(result, status="not_checked", language=None, unmatched=[], reason=reason)
    checked = check_balance(text.decode(), language, bool(args.get("verbose")))
    result["language"] = language
    result.update(checked)
    return _balance_listed(ctx, result) if ctx.mcp else result


def _balance_listed(ctx, result):
    """The server's balance result with at most LISTED_MAX entries of `unmatched` and `pairs`, and
    a warning for each list cut (300,000 entries were 40 MB of a model's context; 300,000 pairs
    61 MB)."""
    warnings = []
    for name, key in (("unmatched", "w.unmatched_cut"), ("pairs", "w.pairs_cut")):
        found = len(result.get(name) or ())
        if found > LISTED_MAX:
            result[name] = result[name][:LISTED_MAX]
            warnings.append(tr(ctx.lang, key, listed=LISTED_MAX, found=found))
    return dict(result, warnings=warnings) if warnings else result


def _structure_request(ctx, args, what, missing, find, *options):
    file = args["file"]
    real, text = read_declared(ctx, file, args.get("encoding"))
    total = text.total()
    line = args["line"]
    if line < 1:
        raise invalid("line_below_one", name="line", value=line)
    if line > total:
        raise out_of_range(file, line, line, total)
    language = _language_of(real, text)
    if language is None:
        raise ToolError("NOT_FOUND", "not_checkable", file=file, what=what)
    found = find(text.decode(), language, line, *options)
    if not found:
        raise ToolError("NOT_FOUND", missing, "range.hint", file=file, line=line)
    return dict({"status": "ok", "file": file, "path": real}, **found, language=language)


def tool_func_range(ctx, args):
    """The function around a line. Arguments: `file`, `line`, `outer`, `encoding`. Result: `start`,
    `end`, `kind`, `name`, `language`."""
    return _structure_request(ctx, args, "function", "no_function", function_range, bool(args.get("outer")))


def tool_tag_range(ctx, args):
    """The markup element around a line. Arguments: `file`, `line`, `encoding`. Result: `start`,
    `end`, `tag`, `language`."""
    return _structure_request(ctx, args, "tag", "no_tag", tag_range)


# --- chips (docs/chips.md) ------------------------------------------------------------------------


def tool_insert_chip(ctx, args):
    """List chips, show one, or insert its text. Arguments: `from` (chip://ID or file://PATH),
    `to` (FILE:LINE), `as` (text or annotated), `filter`, `viewed_code_id` (of the lines around
    `to`, as be-insert's), `preview`. Result: the chip list
    (`chips`, `items`), one chip's record, or an insert's result plus `from`."""
    source, target = args.get("from"), args.get("to")
    if target and not source:
        raise invalid("to_without_from")
    if args.get("viewed_code_id") is not None and not target:  # (a list or a show: it would check nothing)
        raise invalid("view_without_to")
    ChipStore(ctx).sweep()
    if not source:
        return _list_chips(ctx, args.get("filter"))
    record = _chip_source(ctx, source)
    if not target:
        return dict(
            {"status": "ok"},
            **{k: record.get(k) for k in ("id", "tool", "args", "err_msg", "created_at", "text")},
        )
    return _put_chip_back(ctx, args, record)


def _put_chip_back(ctx, args, record):
    """be-insert-chip with `from` (the chip's `record`) and `to`: an insert of its text."""
    source, target = args["from"], args["to"]
    match = _chip_target(ctx, target)
    if not match:
        raise invalid("chip_bad_to", got=target)
    path, after = match.group(1), int(match.group(2))
    content = (
        _annotated(ctx, record, path) if args.get("as", "text") == "annotated" else _chip_text(record, source)
    )
    insert_args = {
        "file": path,
        "after_line": after,
        "content": content,
        "preview": args.get("preview", False),
        "force": True,  # (saved text is put back as it was: a placeholder-looking line in it is real)
        "as_given": True,  # (and into an empty file without a newline its text did not end with)
    }
    if args.get("viewed_code_id") is not None:  # (checked, and followed when the lines moved, as be-insert's)
        insert_args["viewed_code_id"] = args["viewed_code_id"]
    if after < -1:
        raise invalid("after_line_invalid", value=after)
    result = edit_file(
        ctx, "insert-chip", insert_args, lambda opened: _insert_change(ctx, insert_args, opened)
    )
    result["from"] = source
    return result


def _chip_target(ctx, target):
    """The match (path, line) of an insert-chip `to`, blanks around it dropped; but a leading
    blank that is part of an existing file's name (` lead.txt` beside `lead.txt`) is kept."""
    match = re.fullmatch(r"(.+):(-?[0-9]{1,15})", target.strip())
    spaced = re.fullmatch(r"(.+):(-?[0-9]{1,15})", target.rstrip())
    if match and spaced and spaced.group(1) != match.group(1):
        try:
            with locate(ctx, spaced.group(1)) as place:
                return spaced if place.lstat() is not None else match
        except (ToolError, OSError, ValueError):
            pass
    return match


def _chip_text(record, source):
    """The one text a chip (or a file://) keeps, to insert as it is; INVALID_ARGUMENT when none."""
    content = record.get("text")
    if record.get("tool") == "file" and content == "":
        raise invalid("chip_file_empty", file=source)
    if not isinstance(content, str) or content == "":
        raise ToolError(
            "INVALID_ARGUMENT", "chip_no_text", id=record.get("id", source), tool=record.get("tool")
        )
    return content


def _list_chips(ctx, needle):
    import json

    items = []
    for record in ChipStore(ctx).list():
        text = record.get("text") if isinstance(record.get("text"), str) else ""
        haystack = " ".join(
            (str(record.get("tool")), str(record.get("err_msg")), text, json.dumps(record.get("args")))
        )
        if needle and needle.lower() not in haystack.lower():
            continue
        shown = text or json.dumps(record.get("args"), ensure_ascii=False)
        items.append(
            {
                "id": record["id"],
                "tool": record.get("tool"),
                "created_at": record["created_at"],
                "bytes": len(shown.encode("utf-8", "surrogatepass")),
                "summary": shown.strip().split("\n")[0][:80],
                "err_msg": record.get("err_msg") or "",
            }
        )
    return {"status": "ok", "chips": [item["id"] for item in items], "items": items}


def _chip_source(ctx, source):
    if source.startswith("chip://"):
        chip_id = source[len("chip://") :].strip()
        record = ChipStore(ctx).get(chip_id)
        if record is None:
            raise ToolError("NOT_FOUND", "chip_missing", id=_clip(chip_id))
        return record
    if source.startswith("file://"):
        _real, text = read_text(ctx, source)
        return {
            "id": None,
            "tool": "file",
            "args": {"from": source},
            "err_msg": "",
            "created_at": None,
            "text": text.decode(),
        }
    # (the id a delete printed, without its scheme or with it cut short: `chip:ID`)
    bare = re.fullmatch(r"(?:chip:/?)?([0-9a-f]{6,32})", source.strip())
    if bare:
        raise invalid("chip_bad_from", "chip_bad_from_id.hint", got=source, id=bare[1])
    raise invalid("chip_bad_from", got=source)


def _without(line, inside, spaced):
    """`line` with no `inside` left in it (`---` spaced once is `- --`: again until none is)."""
    while inside in line:
        line = line.replace(inside, spaced)
    return line


def _annotated(ctx, record, path):
    import json

    language = detect_language(os.path.basename(path), "")
    commented = path.lower().endswith((".jsonc", ".json5"))  # (JSON's kinds that take // comments)
    start, _space, end = ("//" if commented else _COMMENT_PREFIX.get(language, "#")).partition(" ")
    if not start:
        raise invalid("chip_no_comments", file=path)
    arguments = json.dumps(record.get("args"), ensure_ascii=False, indent=2)
    lines = [f'Chip {record.get("id")} from tool "{record.get("tool")}"']
    if record.get("err_msg"):
        lines.append(f"Error: {record['err_msg']}")
    lines += ["Original arguments:", *arguments.split("\n")]
    if end:  # (a comment that ends on its line: its end, and in markup any --, never inside it)
        inside, spaced = ("--", "- -") if end == "-->" else (end, " ".join(end))
        return "".join(f"{start} {_without(line, inside, spaced)} {end}\n" for line in lines)
    return "".join(f"{start} {line}\n" for line in lines)


# --- transactions (docs/transactions.md) ----------------------------------------------------------


def tool_trx_status(ctx, args):
    """No arguments. Result: `snapshots`, newest first, one per event (an event of several files
    has `files`), of files inside the root only; `warnings` when snapshots live in memory only (the
    cache failed during this session)."""
    snapshots = []
    for records in reversed(_events(SnapshotStore(ctx).list())):
        records = [r for r in records if not ctx.root or is_inside(r["file"], ctx.root)]
        if records:
            snapshots.append(_event_entry(records))
    result = {"status": "ok", "snapshots": snapshots}
    if ctx.persist_failure:
        result["warnings"] = _local_warnings(
            ctx, [("w.snapshots_in_memory", {"detail": ctx.persist_failure})]
        )
    return result


def _event_entry(records):
    """The status entry of one event (its records, oldest first); `files` when it has several."""
    entry = {k: records[0].get(k) for k in ("event_id", "tool", "file", "created_at", "summary")}
    if len(records) > 1 or records[0].get("files"):
        entry["files"] = [r["file"] for r in records]
    return entry


def _events(records):
    """Records (oldest first) grouped by event: [[record, ...], ...], oldest event first."""
    return [group for _eid, _size, group in _by_event((r["event_id"], 0, r) for r in records)]


def tool_trx_commit(ctx, args):
    """Forget pending snapshots. Arguments: `file` (the events that touched it, each whole, as a
    rollback selects them: forgetting one file's part of an event left a rollback that undid only
    its other files); with a root, not the events that also changed a file outside it. Result:
    `committed` (the events forgotten, as trx-status counts them)."""
    store = SnapshotStore(ctx)
    with store.lock():
        records = _events_in_root(ctx, store.list())  # (what trx-status lists: a root's own events)
        if args.get("file") is not None:
            records = _events_of_file(records, resolve_path(ctx, args["file"]))
        outside = _reaching_out(ctx, records)
        for record in records:
            if record["event_id"] not in outside:
                store.remove(record)
    result = {"status": "ok", "committed": len({r["event_id"] for r in records} - set(outside))}
    if outside:
        fields = [{"event_id": event, "file": file, "root": ctx.root} for event, file in outside.items()]
        result["warnings"] = _local_warnings(ctx, [("w.commit_outside_root", f) for f in fields])
    return result


def _reaching_out(ctx, records):
    """{event id: a file outside the root} of the events of `records` that also changed a file
    outside the root (a server of a folder of a checkout lists the events of the whole checkout
    that touched its folder): its commit and rollback leave them to one that reaches all."""
    if not ctx.root:
        return {}
    return {r["event_id"]: r["file"] for r in reversed(records) if not is_inside(r["file"], ctx.root)}


def tool_trx_rollback(ctx, args):
    """Undo snapshots newest first, all or nothing (docs/transactions.md).

    Arguments: `steps` (default 1) or `event_id`, optional `file`, `force`. Result: `rolled_back`
    (event ids), `files` (real paths).
    """
    if "steps" in args and "event_id" in args:
        raise invalid("steps_and_event")
    store = SnapshotStore(ctx)
    for attempt in range(_ROLLBACK_CHOICES):
        chosen, places = _rollback_choice(ctx, args, store), {}
        try:
            _locate_each(ctx, [record["file"] for record in chosen], places)
            with Locks(ctx) as locks:
                locks.take_all(_one_place_each(places))
                if _still_listed(store, chosen, last=attempt + 1 == _ROLLBACK_CHOICES):
                    continue  # (an event whose commit was saving its snapshots: choose again, whole)
                _same_files(places)
                located = (places, {}, _file_keys(places))  # (the stats checked: filled in by the check)
                warnings = _check_rollback(args, chosen, located)
                result = {"status": "ok", "rolled_back": list(dict.fromkeys(r["event_id"] for r in chosen))}
                warnings += _restore_all(ctx, store, chosen, located, result, forced=bool(warnings))
                warnings += _made_elsewhere(ctx, chosen)
                break
        finally:
            for place in places.values():
                place.folder.close()
    result["files"] = sorted(place.real for place in places.values())
    if warnings:
        result["warnings"] = _local_warnings(ctx, warnings)
    return result


def _made_elsewhere(ctx, chosen):
    """A warning for each undone event another process made (a CLI command, another server in the
    workspace): a rollback is the workspace's, and a model asking to undo "its" last edit may
    have undone someone else's, which that one is never told of."""
    said = {}
    for record in chosen:
        if record.get("session") not in (None, ctx.session):
            said.setdefault(
                record["event_id"], {"event_id": record["event_id"], "summary": record.get("summary")}
            )
    return [("w.rollback_elsewhere", fields) for fields in said.values()]


def _events_in_root(ctx, records):
    """The records of the events that trx-status lists: those with a file inside the root (two
    roots inside one workspace, a checkout's folders, see each other's events in the store)."""
    if not ctx.root:
        return records
    seen = {r["event_id"] for r in records if is_inside(r["file"], ctx.root)}
    return [r for r in records if r["event_id"] in seen]


_ROLLBACK_CHOICES = 3  # choices a rollback makes when the events it chose gain records meanwhile


def _rollback_choice(ctx, args, store):
    """The snapshot records a rollback undoes (_rollback_selection of what trx-status lists)."""
    records = _events_in_root(ctx, store.list())
    if args.get("file") is not None:
        records = _events_of_file(records, resolve_path(ctx, args["file"]))
    chosen = _rollback_selection(args, records)
    for event_id, file in _reaching_out(ctx, chosen).items():  # (not SANDBOX "use a path inside")
        fields = {"event_id": event_id, "file": file, "root": ctx.root}
        raise ToolError("SANDBOX", "rollback_outside_root", "rollback_outside_root.hint", **fields)
    return chosen


def _grown_events(now, chosen):
    """The events of `chosen` records that have records now ((event, seq) pairs) not chosen."""
    events, seen = {r["event_id"] for r in chosen}, {(r["event_id"], r.get("seq")) for r in chosen}
    return [event for event, seq in now if event in events and (event, seq) not in seen]


def _still_listed(store, chosen, last=True):
    """CONFLICT when an event chosen before the locks were taken is gone once they are: another
    rollback undid it (or a commit forgot it) while this one waited. True when one has more
    records now: its commit was saving them when it was chosen, and it would be undone in part
    (it is chosen again; CONFLICT after the `last` choice)."""
    now = {(r["event_id"], r.get("seq")) for r in store.list()}
    for record in chosen:
        if (record["event_id"], record.get("seq")) not in now:
            raise ToolError("CONFLICT", "rollback_raced", event_id=record["event_id"], file=record["file"])
    grown = _grown_events(now, chosen)
    if grown and last:
        raise ToolError("CONFLICT", "rollback_growing", event_id=grown[0])
    return bool(grown)


def _same_files(places):
    """CONFLICT (even with force) when a recorded path now leads to another file: a link was put
    in its place, and a rollback would write, or delete, the file it points to."""
    for path, place in places.items():
        if place.real != path:
            raise ToolError("CONFLICT", "rollback_elsewhere", file=path, now=place.real)


def _events_of_file(records, real):
    """The records of the events that touched the file `real`, each event with all its files; an
    event that touched it through another name (a hard link) too."""
    names = {r["file"] for r in records}
    same = {name for name in names if name == real or _same_file(name, real)}
    touched = {r["event_id"] for r in records if r["file"] in same}
    return [r for r in records if r["event_id"] in touched]


def _same_file(one, two):
    try:
        return os.path.samefile(one, two)
    except (OSError, ValueError):
        return False


def _locate_each(ctx, paths, places):
    """Into `places` (path -> Place): each of `paths` walked to (a tampered snapshot must not reach
    outside the root); past _OPEN_FOLDERS, each folder is closed until it is needed again."""
    for path in paths:
        if path not in places:
            places[path] = locate(ctx, path)
            if len(places) > _OPEN_FOLDERS:
                places[path].release()


def _one_place_each(places):
    """The places to lock: two names of one file (hard links) are one file."""
    return [places[path] for path in dict.fromkeys(_file_keys(places).values())]


def _file_keys(places):
    """{path: the first of `places`' paths that names the same file}: hard links are one file."""
    first, keys = {}, {}
    for path, place in places.items():
        identity = _identity(place.lstat()) or path
        keys[path] = first.setdefault(identity, path)
    return keys


def _rollback_selection(args, records):
    """The snapshot records to undo, newest first: `steps` counts events, and an event of several
    files is undone whole (with `file`, the events that touched that file)."""
    events = _events(records)
    if "event_id" in args:
        ids = [event[0]["event_id"] for event in events]
        if args["event_id"] not in ids:
            raise ToolError("NOT_FOUND", "snapshot_missing", event_id=args["event_id"])
        chosen = events[ids.index(args["event_id"]) :]
    else:
        steps = args.get("steps", 1)
        if steps < 1:
            raise invalid("line_below_one", name="steps", value=steps)
        if not events:
            scope = f" ({args['file']})" if args.get("file") else ""
            raise ToolError("NOT_FOUND", "nothing_to_rollback", "snapshot_missing.hint", scope=scope)
        chosen = events[-steps:]
    return [record for event in reversed(chosen) for record in reversed(event)]


def _current_bytes(place):
    """The file's bytes now, or None when it does not exist (only regular files; never blocks)."""
    try:
        fd, _st = place.open()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise os_error(exc, place.real) from None
    with open(fd, "rb", closefd=True) as handle:
        return handle.read()


_NOT_REGULAR = (
    "not a regular file"  # (_check_rollback's state of a FIFO, device or folder now at a file's name)
)


def _check_rollback(args, chosen, located):
    """Every file must hold exactly what its newest snapshot wrote, else CONFLICT and nothing undone;
    with `force`, one warning for each file that did not (so no warning: nothing was forced).
    `located`: (path -> place, path -> stat, path -> the path that names its file first); into the
    stats: each file's, taken before its bytes were read."""
    (places, seen, keys), state, warnings = located, {}, []
    for record in chosen:
        path = keys[record["file"]]  # (two names of one file are one file: their events chain)
        if path not in state:
            seen[path] = places[path].lstat()
            try:
                data = _current_bytes(places[path])
                state[path] = None if data is None else _sha256(data)
            except ToolError:  # a FIFO or device now: no longer what the edit left
                state[path] = _NOT_REGULAR
        expected = None if record["after_sha256"] == "absent" else record["after_sha256"]
        if state[path] != expected:
            if not args.get("force") or state[path] == _NOT_REGULAR:  # (force cannot help)
                raise _rollback_refused(record, state[path])
            warnings += _forced_words(record, state[path])
        state[path] = None if record["before"] == "absent" else _before_sha(record)
    return warnings


def _rollback_refused(record, now):
    """CONFLICT for a file a rollback finds changed since `record`'s event (`now`: its SHA-256),
    gone (None; it said "no longer holds", "read the file") or no regular file."""
    key = {None: "rollback_gone", _NOT_REGULAR: "rollback_not_file"}.get(now, "rollback_conflict")
    made = now is None and record["before"] == "absent"  # (no text from before it to make again)
    hint = "rollback_gone_made.hint" if made else None
    return ToolError("CONFLICT", key, hint, file=record["file"], event_id=record["event_id"])


def _forced_words(record, now):
    """The warning of a file a forced rollback restores although it no longer holds what the
    event wrote: its content overwritten, or, gone (`now` None), made again; nothing when the event
    made it and it is gone (the rollback has nothing to do there)."""
    fields = {"file": record["file"], "event_id": record["event_id"]}
    if now is None:
        return [] if record["before"] == "absent" else [("w.rollback_forced_gone", fields)]
    return [("w.rollback_forced", fields)]


def _before_sha(record):
    if "_bytes" in record:
        return _sha256(record["_bytes"]) if record["_bytes"] is not None else None
    try:
        with open(record["_base"] + ".bin", "rb") as handle:
            return _sha256(handle.read())
    except OSError:
        return "unreadable"


def _restore_all(ctx, store, chosen, located, result, forced=False):
    """Put every chosen snapshot's file back as one journaled commit (all or nothing: a failure
    part way puts back what was restored, and every snapshot is kept); the snapshots are dropped
    once the files are back (docs/transactions.md). `forced`: some file held what others wrote
    since, and the files' current bytes are kept as a new snapshot event, whose id goes into
    `result`. Returns the warnings. `located`: as _check_rollback() left it."""
    places, seen, keys = located
    kept = result if forced else None
    final = {}  # file -> the record whose "before" it gets back (the oldest chosen)
    for record in chosen:
        final[keys[record["file"]]] = record
    files, deleted = [], []
    for path, record in final.items():
        places[path] = _reopened(ctx, places[path])
        restore = _restore_commit(store, record, places[path], seen[path], kept is not None)
        if restore is not None:
            files.append(restore)
            if record["before"] == "absent":  # (the folders made for it go too, once the rollback stands)
                restore.after_folders = record.get("created_folders") or []
                deleted.append(record)
    warnings = _commit_restores(ctx, files, kept, chosen)
    for record in final.values():
        if record["before"] == "absent":
            _remove_folders(record.get("created_folders"), ctx.root)
    for record in deleted:  # (not a file the event made that was gone already)
        warnings.append(("w.rollback_deleted", {"event_id": record["event_id"], "file": record["file"]}))
    return warnings


def _commit_restores(ctx, files, kept, chosen):
    """The commit of a rollback's restores. With `kept` (a forced rollback's result), it is an
    event of its own, holding the files' bytes before it: its id goes into `kept`, with a warning;
    its news of evicting the very snapshots the call undoes is left out (they go anyway)."""
    if kept is None:  # (its warnings too: a file with hard links written in place said nothing)
        return commit_files(ctx, "rollback", files, snapshot=False, rolls_back=chosen)[1]
    events = kept["rolled_back"]
    summary = f"rollback: {', '.join(events)} (forced)"
    ctx.leaving_events = frozenset(events)  # (not counted against the bounds its own event meets)
    try:
        event_id, warnings = commit_files(ctx, "rollback", files, summary, rolls_back=chosen, must_keep=True)
    finally:
        ctx.leaving_events = frozenset()
    if event_id:  # (a forced rollback is itself an event: undoing it brings back what it overwrote)
        kept["event_id"] = event_id
        warnings.append(("w.rollback_kept", {"event_id": event_id}))
    return warnings


def _restore_commit(store, record, place, st, keep=False):
    """The FileCommit that puts `record`'s bytes before back into its file (None: it had none,
    and has none now); with `keep`, its current bytes go with it, for the snapshot. `st`: the
    file's stat when its bytes were checked: a file saved since then is CONFLICT, checked right
    before its rename as an edit's files are."""
    before = _kept_before(store, record)
    if st is not None:
        try:
            _require_regular(st, place.file)
        except ToolError:  # (its hint, "name a file inside it", is no rollback's)
            fields = {"file": record["file"], "event_id": record["event_id"]}
            raise ToolError("CONFLICT", "rollback_not_file", **fields) from None
    if before is None and st is None:
        return None
    raw = _current_bytes(place) if st is not None and (keep or written_in_place(place, st)) else None
    payload = None if before is None else payload_of(before)
    commit = FileCommit(place, st, raw, payload)
    commit.mode = _restored_mode(record, st, forced=keep)
    commit.owner = None if st is not None else _restored_owner(record)  # (a file made again)
    return commit


def _kept_before(store, record):
    """The bytes a snapshot record kept of its file before its event (None: it had none)."""
    try:
        return store.before_bytes(record)
    except FileNotFoundError:  # (removed by hand, or by a cleaner of caches: no free space to find)
        fields = {"file": record["file"], "event_id": record["event_id"]}
        raise ToolError("NOT_FOUND", "snapshot_bytes_gone", "snapshot_changed.hint", **fields) from None
    except OSError as exc:
        raise os_error(exc, record["_base"] + ".bin") from None


def _restored_owner(record):
    """The (uid, gid) a restore that makes its file again gives it, where it may; None when the
    record kept none."""
    owner = record.get("before_owner")
    ids = isinstance(owner, list) and len(owner) == 2 and all(type(n) is int and n >= 0 for n in owner)
    return tuple(owner) if ids else None


def _restored_mode(record, st, forced=False):
    """The permission bits a restore gives its file (None: it keeps its own): those the snapshot
    record kept for a file made again; a file there now keeps its own as any edit does (a bit its
    user added since, `chmod +x`, went), except in a forced rollback, which puts in no bit the old
    file did not have (its text into a file another program made more open)."""
    mode = record.get("before_mode")
    if not (isinstance(mode, int) and 0 <= mode <= 0o7777) or (st is not None and not forced):
        return None
    return mode if st is None else st.st_mode & 0o7777 & mode


# --- several edits, one atomic change (docs/cli.md#edit-and-patch) -------------------------------

EDIT_MAX_ITEMS = 500
_EDIT_OPS = ("replace", "insert", "delete", "write")
_ITEM_TYPES = {
    "file": "string", "start": "integer", "end": "integer", "old": "string", "after_line": "integer",
    "content": "string", "viewed_code_id": "string", "encoding": "string",
}  # fmt: skip
_ITEM_KEYS = frozenset((*_ITEM_TYPES, "op", "target"))


def tool_edit(ctx, args):
    """Several edits of one or more files as one atomic change. Arguments: exactly one of `edits`
    (items {op, file, ...} of replace, insert, delete, write; coordinates of the files as they are
    before the call) or `patch` (a unified diff); `force`, `preview`, `brief`, `format`. Result:
    `changed`, `event_id`, `files` [{file, path, total, diff, balance, viewed_code_id}], `items`
    [{index, file, op, start, end, added, removed}], `warnings`."""
    if ("edits" in args) == ("patch" in args):
        raise invalid("edit_one_of")
    if "edits" in args:
        items, failures = _edit_items(args["edits"])
    else:
        items, failures = _spaces_typed_after_names(ctx, parse_patch(args["patch"])), []
        if not ctx.root and not args.get("unsafe_paths"):
            for item in items:  # (without a root, the CLI keeps a patch in the current folder)
                _patch_path_inside(ctx, item["file"])
            inside = os.path.realpath(ctx.cwd)  # (and its walk, which a swapped folder could lead out)
            return apply_items(ctx, args, items, failures, len(items), inside)
    return apply_items(ctx, args, items, failures, len(items) + len(failures))


def _spaces_typed_after_names(ctx, items):
    """`items` with a path that ends in spaces (`--- f.txt \t<stamp>`: a space typed before the tab)
    naming the file without them, when only that one exists; a name that does end in a space
    (git's `--- a/notes \t`) is kept when it exists or when the other does not."""
    for item in items:
        name = item["file"]
        bare = name.rstrip(" ") if name else ""
        if bare and bare != name:
            try:
                if not os.path.lexists(_full_path(ctx, name)) and os.path.lexists(_full_path(ctx, bare)):
                    item["file"] = item["args"]["file"] = bare
            except (OSError, ToolError):  # (the item's own walk names what is wrong)
                pass
    return items


def _patch_path_inside(ctx, file):
    """SANDBOX for a patch path that leaves the current folder: absolute, out through `..`, or
    through a symbolic link to a folder outside it (as git apply refuses a path beyond a link)."""
    parts = os.path.normpath(file).split(os.sep)
    if os.path.isabs(file) or file.startswith(("~", "file:")) or parts[0] == "..":
        raise ToolError("SANDBOX", "patch_outside", file=file)
    here = os.path.realpath(ctx.cwd)
    if not is_inside(os.path.realpath(os.path.join(here, file)), here):
        raise ToolError("SANDBOX", "patch_outside", file=file)


def _json_value(value, opens=("[", "{")):
    """A value sent as a JSON string holding an array or object (one that `opens` with one of
    those) is decoded (like `arguments`); one too deep to decode stays the text it is."""
    if isinstance(value, str) and value.strip()[:1] in opens:
        import json

        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _edit_items(value):
    """(items, failures) from `edits`: each item {index, op, file, args}; every bad item is named."""
    value = _json_value(value)
    if isinstance(value, list) and len(value) > EDIT_MAX_ITEMS:
        raise ToolError("INVALID_ARGUMENT", "edits_too_many", count=len(value), max=EDIT_MAX_ITEMS)
    if not isinstance(value, list) or not value:
        raise invalid("edits_bad", max=EDIT_MAX_ITEMS, got=_show(value))
    items, failures = [], []
    for index, item in enumerate(value):
        try:
            items.append(_edit_item(index, _json_value(item)))
        except ToolError as exc:
            failures.append((index, item.get("file") if isinstance(item, dict) else None, _kept(exc)))
    return items, failures


def _implied_op(item):
    """The op of an item that names none, by the names it means (`new_string` makes a replace, not
    a delete; `type` names the op): insert with after_line, replace with content, else delete."""
    keys = sorted(_ITEM_KEYS | {"op"})
    item = {key if key in keys else _meant_name(key, keys) or key: value for key, value in item.items()}
    if item.get("op") in _EDIT_OPS:
        return item["op"]
    if "after_line" in item:
        return "insert"
    return "replace" if "content" in item else "delete"


def _edit_item(index, item):
    if not isinstance(item, dict):
        raise invalid("item_not_object", got=_show(item))
    op = item.get("op")
    op = _implied_op(item) if op is None else op
    if op not in _EDIT_OPS:
        raise invalid("arg_choice", name="op", choices=", ".join(_EDIT_OPS), got=_show(op))
    tool = find_tool(op)
    accepted = sorted(({p.name for p in tool.params} & _ITEM_KEYS) | {"op"})
    implied = "op" not in item  # (its keys chose the op: `new_content` made a replace a delete)
    _refuse_unknown(item, accepted, op, known=sorted(_ITEM_KEYS | {"op"}) if implied else None)
    args = validate_args(tool, {k: v for k, v in item.items() if k != "op"})
    return {"index": index, "op": op, "file": args["file"], "args": args}


class ItemsFailed(ToolError):
    """Items of a be-edit that failed: the first one's error, with `index` and every failure in
    `failed`, so one retry can fix them all."""

    def __init__(self, failures, count):
        failures = sorted(failures, key=lambda f: f[0])
        first = failures[0][2]
        super().__init__(first.code, first.key, first.hint_key, data=dict(first.data), **first.fields)
        self.failures, self.count = failures, count

    def to_dict(self, lang, names=None):
        index, file, first = self.failures[0]
        error = first.to_dict(lang, names)
        error["message"] = tr(
            lang,
            "edit_failed",
            index=index,
            file=file or "-",
            message=error["message"],
            failed=len(self.failures),
            count=self.count,
        )
        error["index"] = index
        error["failed"] = []
        for position, _file, exc in self.failures:
            entry = exc.to_dict(lang, names)
            entry.pop("hint", None)
            error["failed"].append(dict({"index": position}, **entry))
        return error


class _FileGroup:
    """The items of one file in a be-edit call, and what planning them made."""

    __slots__ = ("place", "file", "items", "exists", "opened", "changes", "delete_file")
    __slots__ += ("new_body", "pieces", "plans", "changed")

    def __init__(self, place, file, item):
        self.place, self.file, self.items = place, file, [item]
        self.exists, self.opened, self.changes, self.delete_file = False, None, [], False
        self.new_body = self.pieces = self.plans = None
        self.changed = False


# One item's byte plan in its file (new body = body[:a] + block + body[b:]), with its item and Change.
_ItemPlan = collections.namedtuple("_ItemPlan", "a block b item change")


def apply_items(ctx, args, items, failures, total, inside=None):
    """Plan every item against the files as they are, then write all files or none. `inside`: a
    folder every file must be in, as its walk finds it (SANDBOX)."""
    failures = list(failures)
    groups = {}
    many = len(items) > _OPEN_FOLDERS  # (folders are closed between steps: bounded descriptors)
    try:
        _Faults.point("items")
        _group_by_file(ctx, items, groups, failures, many, inside)
        ordered = sorted(groups.values(), key=lambda g: g.place.real)  # the write order
        failures.extend(_file_and_folder(ordered))
        with Locks(ctx) as locks:
            locks.take_all([group.place for group in ordered])
            for group in ordered:
                group.place = _reopened(ctx, group.place)
                _plan_group(ctx, args, group, failures)
                if many:
                    group.place.release()
            if failures:  # (with the files the commit would refuse too: one retry fixes them all)
                raise ItemsFailed(failures + _unwritable(ordered, {one[0] for one in failures}), total)
            return _finish_items(ctx, args, ordered, total)
    finally:
        for group in groups.values():
            group.place.folder.close()
            opened = group.opened
            if opened is not None and opened.place is not None:
                opened.place.folder.close()


def _file_and_folder(ordered):
    """INVALID_ARGUMENT for items of one call that use one path as a file and as a folder
    (`write a/b` and `write a/b/c`): before, the second failed as a CONFLICT with "another
    program"."""
    found, by_path = [], {group.place.real: group for group in ordered}
    for later in ordered:
        folder = os.path.dirname(later.place.real)
        while folder not in by_path and os.path.dirname(folder) != folder:
            folder = os.path.dirname(folder)
        group = by_path.get(folder)
        if group is not None:
            one, two = group.items[0], later.items[0]
            fields = {"first": one["index"], "second": two["index"], "first_file": one["file"]}
            error = ToolError("INVALID_ARGUMENT", "edit_file_and_folder", second_file=two["file"], **fields)
            found += [(item["index"], later.file, error) for item in later.items]
    return found


def _group_by_file(ctx, items, groups, failures, many, inside=None):
    """Into `groups` (identity -> _FileGroup): the items of each file, two names of one file (hard
    links) as one; an item whose file cannot be walked to (or, walked, is not `inside`) goes into
    `failures`. `many`: each folder closed until it is needed again."""
    for item in items:
        try:
            place = locate(ctx, item["file"])
            if inside is not None and not is_inside(place.real, inside):
                place.folder.close()
                raise ToolError("SANDBOX", "patch_outside", file=item["file"])
            st = place.lstat()
        except ToolError as exc:
            failures.append((item["index"], item["file"], _kept(exc)))
            continue
        key = _identity(st) or place.real
        group = groups.get(key)
        if group is None:
            groups[key] = _FileGroup(place, item["file"], item)
            if many:
                place.release()
        else:
            place.folder.close()
            group.items.append(item)


def _codec_or_name(name):
    try:
        return _lookup_codec(name)
    except ToolError:
        return name  # (an unknown name is refused when the file is read with it)


def _plan_group(ctx, args, group, failures):
    """Resolve and check every item of one file; their Changes, composed, make the file's plan."""
    place, file = group.place, group.file
    named = {i["index"]: i["args"]["encoding"] for i in group.items if i["args"].get("encoding")}
    if _two_encodings(file, named, failures):
        return
    group.exists = exists = place.lstat() is not None
    try:
        group.opened = _open_group(ctx, group, next(iter(named.values()), args.get("encoding")))
    except ToolError as exc:
        failures.extend((item["index"], file, exc) for item in group.items)
        group.changes = []
        return
    if not _whole_file_alone(group, failures):
        return
    changes = []
    _note_earlier_sections(group.items)
    for item in group.items:
        try:
            changes.append((item, _item_change(ctx, args, item, group.opened, exists)))
        except ToolError as exc:
            failures.append((item["index"], file, _kept(exc)))
    group.changes = changes
    group.delete_file = any(item.get("delete_file") for item in group.items)
    failures.extend(_overlaps(changes, file) + _after_moved_hunks(group.opened, changes))


def _kept(error):
    """An item's error as its edit keeps it until every item is tried: without its traceback, whose
    frames hold what the item worked on (the 200,000 places an `old` stood at, for each of 40
    items, were 2.7 GB)."""
    return error.with_traceback(None)


def _whole_file_alone(group, failures):
    """Whether a patch hunk that creates its file is its file's only item, also where the patch
    spells that file twice (`b/n.py` and `b/./n.py`, or through a link): two creations were joined
    into one file in silence. Else each such hunk fails (INVALID_ARGUMENT). (A deletion beside
    another hunk of its file overlaps it: refused as that, naming both names.)"""
    made = [item for item in group.items if item.get("create")]
    if not made or len(group.items) == 1:
        return True
    for item in made:
        error = invalid("patch_one_hunk", hunk=item["hunk"], file=item["file"], count=len(group.items))
        failures.append((item["index"], item["file"], error))
    group.changes = []
    return False


def _two_encodings(file, named, failures):
    """Whether items of one file name different encodings (`named`: index -> name); each of them
    then fails with INVALID_ARGUMENT."""
    if len({_codec_or_name(name) for name in named.values()}) < 2:
        return False
    items, names = ", ".join(map(str, named)), ", ".join(dict.fromkeys(named.values()))
    error = ToolError("INVALID_ARGUMENT", "edit_encodings", items=items, file=file, names=names)
    failures.extend((index, file, error) for index in named)
    return True


def _open_group(ctx, group, encoding):
    """The Opened file of a group: read (in `encoding`, if named), or a new empty text."""
    if group.exists:
        return open_text(ctx, group.place, encoding)
    return Opened(group.file, group.place.real, _new_text(encoding or ctx.encoding), group.place)


def _new_text(encoding):
    """The Text of a file that does not exist yet, in `encoding` (UTF-16/32 get their BOM)."""
    codec = _lookup_codec(encoding or "utf-8")
    if codec.startswith(("utf-16", "utf-32")):
        wire = _UTF16_CODECS.get(codec, codec)
        bom = "\ufeff".encode(wire) if codec in ("utf-16", "utf-32") else b""
        return Text(b"", "utf-8", codec, bom, wire)
    return Text(b"", codec, codec)


def _item_change(ctx, args, item, opened, exists):
    op, item_args = item["op"], dict(item["args"], force=args.get("force"))
    if not exists and op not in ("write", "patch"):
        raise not_found(item["file"], ctx.root or ctx.cwd, opened.real)
    change = _item_plan(ctx, args, item, item_args, opened, exists)
    if not exists:
        change.warnings += _created_near(opened.place, args.get("preview"))
    return change


def _item_plan(ctx, args, item, item_args, opened, exists):
    """The Change of one be-edit item."""
    op = item["op"]
    if op == "patch":
        item["force"] = args.get("force")
        return item["plan"](ctx, opened, exists)
    if op == "replace":
        _replace_arguments(item_args)
        return _replace_change(ctx, item_args, opened)
    if op == "insert":
        _insert_arguments(item_args)
        return _insert_change(ctx, item_args, opened)
    if op == "delete":
        _delete_arguments(item_args)
        return _delete_change(ctx, item_args, opened)
    said = []  # (a whole-file write item: its content rescued as be-write's is)
    content = _rescued_content(ctx, dict(item_args, preview=args.get("preview")), said, "be-edit")
    change = _write_change(dict(item_args, content=content), opened, exists)
    change.warnings[:0] = said
    return change


def _write_change(args, opened, exists):
    """A whole-file write as a Change replacing every line (keeps encoding, BOM, line endings)."""
    text = opened.text
    content = _no_second_bom(text, 0, args["content"])  # (as the write command drops it)
    placeholder_guard(args, opened, content, text.decode() if exists else "")
    if exists:
        new_body = _rewritten_body(text, content)
    elif text.wire:
        text.encode(content)  # (refuses what the file's encoding cannot hold)
        new_body = content.encode("utf-8", "surrogatepass")
    else:
        new_body = text.encode(content)
    total, added = text.total(), line_count(new_body)
    fields = {"start": 1, "end": total, "removed": total, "added": added}
    return Change(text, (0, new_body, len(text.body)), 1, total, added, fields, at=0)


def _overlaps(changes, file):
    """INVALID_ARGUMENT for two items of one file whose ranges overlap (or a write with others):
    (index, file, error) of each later item of such a pair, once (its first pair)."""
    found = []
    for n, (item, change) in enumerate(changes):
        for other, other_change in changes[n + 1 :]:
            one, two = sorted((item, other), key=lambda i: i["index"])
            if any(index == two["index"] for index, _file, _error in found):
                continue  # (four items on one line: three fail, not six pairs)
            if "write" in (item["op"], other["op"]) or _ranges_overlap(change, other_change):
                found.append((two["index"], two["file"], _overlap_error(one, two)))
            elif _same_insert(item, change, other, other_change):
                fields = {"first": one["index"], "second": two["index"], "file": two["file"]}
                error = ToolError(
                    "INVALID_ARGUMENT",
                    "edit_repeated",
                    data={"items": [one["index"], two["index"]]},
                    **fields,
                )
                found.append((two["index"], two["file"], error))
    return found


def _same_insert(item, change, other, other_change):
    """Whether two insert items of one file add the same lines at the same place (a retry or a
    copy: a patch's repeated hunk is refused the same way, and so is one sent for two names of
    one file, `f` and `./f`, which _repeated_hunks, reading names, cannot tell)."""
    if "tagged" in item and "tagged" in other:
        return (item["old_start"], item["tagged"]) == (other["old_start"], other["tagged"])
    same = item["op"] == other["op"] == "insert" and change.first == other_change.first
    one, two = (
        _strip_one_newline(
            normalize_newlines(content_newlines(i["args"].get("content", ""), change.old_body))
        )
        for i in (item, other)
    )
    return same and one == two  # (`log()` and `log()\n` are one line; `\r\r\n` as written)


def _overlap_error(one, two):
    """INVALID_ARGUMENT for two overlapping items; a patch's hunks are named by their numbers in
    their file (from 1), as its other messages name them."""
    pair = [one["index"], two["index"]]
    names = {"first_file": one["file"], "second_file": two["file"]}  # (each as given)
    if "hunk" in one and "hunk" in two and one["file"] != two["file"]:  # (two names of one file)
        fields = dict(names, first=one["hunk"], second=two["hunk"])
        return ToolError("INVALID_ARGUMENT", "patch_overlap_names", data={"items": pair}, **fields)
    if "hunk" in one and "hunk" in two:
        fields = {"first": one["hunk"], "second": two["hunk"], "file": two["file"]}
        return ToolError("INVALID_ARGUMENT", "patch_overlap", data={"items": pair}, **fields)
    return ToolError(
        "INVALID_ARGUMENT", "edit_overlap", data={"items": pair}, first=pair[0], second=pair[1], **names
    )


def _ranges_overlap(one, two):
    """Replaced/deleted ranges overlap, or an insertion falls strictly inside the other's range."""
    one_insert, two_insert = one.last < one.first, two.last < two.first
    if one_insert and two_insert:
        return False
    if one_insert or two_insert:
        point, span = (one, two) if one_insert else (two, one)
        after = point.first - 1
        return span.first <= after < span.last
    return one.first <= two.last and two.first <= one.last


def _line_order(pair):
    """Changes top to bottom: by their old lines (an insertion before what starts below it), then
    in item order (inserts at one place land in item order)."""
    item, change = pair
    return (change.first, change.last, item["index"])


def _compose(text, changes):
    """(new body, pieces) of the changes of one file applied as if one by one from the bottom of
    the file up, so every coordinate refers to the file before the call. Each change is applied to
    the untouched head of the file followed by what the changes below it made (the tail), so the
    final-newline rule sees the file as it then is. `pieces` are (bytes or None, start, stop) of the
    result after the untouched head: None means body[start:stop]."""
    body = text.body
    eol = dominant_eol(body)
    ordered = sorted(changes, key=_line_order)
    head, tail = len(body), _Tail(body)
    for _item, change in reversed(ordered):
        if change.raw is None:  # literal bytes (replace by old, a whole-file write)
            head = _push_literal(tail, body, head, change.plan)
            continue
        a, block, b = change.raw
        a, b = min(a, head), min(b, head)
        if head and body[head - 1 : head] != b"\n":  # the line at `head` goes on in the tail
            a, b = (x + tail.line_end() if x == head else x for x in (a, b))
        a2, block2, b2 = splice_plan(_Virtual(body, head, tail), a, b, block, eol)
        if a2 >= head:  # the whole change falls in what the changes below made
            kept = tail.first(a2 - head)
            tail.drop(b2 - head)
            tail.push(block2)
            tail.push(kept)
            continue
        if b2 > head:
            tail.drop(b2 - head)
            b2 = head
        tail.push_body(b2, head)
        tail.push(block2)
        head = a2
    tail.push_body(0, head)
    return tail.join(), tail.pieces


def _push_literal(tail, body, head, plan):
    """Put a literal change (a, block, b) of the untouched head body[:head] in front of `tail`;
    returns the new head. A change below that took the end of its line (the newline of a last
    line it deleted) takes it from the block too."""
    a, block, b = plan
    if b > head and block.endswith(body[head:b]):
        block = block[: len(block) - (b - head)]
    tail.push_body(min(b, head), head)
    tail.push(block)
    return a


class _Tail:
    """What the changes below the current one made: pieces, first piece first."""

    def __init__(self, body):
        self.body, self.pieces = body, []  # pieces are kept last-first, so pushing in front is cheap

    def push_body(self, start, stop):
        """Put body[start:stop] in front."""
        if stop > start:
            self.pieces.append((None, start, stop))

    def push(self, data):
        """Put `data` in front."""
        if data:
            self.pieces.append((data, 0, len(data)))

    def _data(self, piece):
        source, start, stop = piece
        return (self.body if source is None else source)[start:stop]

    def __len__(self):
        return sum(stop - start for _s, start, stop in self.pieces)

    def first(self, count):
        out = b""
        for piece in reversed(self.pieces):
            if len(out) >= count:
                break
            out += self._data(piece)[: count - len(out)]
        return out

    def last_byte(self):
        return self._data(self.pieces[0])[-1:] if self.pieces else b""

    def line_end(self):
        """Bytes up to and including the first line terminator (all of it when there is none)."""
        done = 0
        for piece in reversed(self.pieces):
            data = self._data(piece)
            found = data.find(b"\n")
            if found >= 0:
                return done + found + 1
            done += len(data)
        return done

    def drop(self, count):
        while count > 0:
            source, start, stop = self.pieces.pop()
            if stop - start > count:
                self.pieces.append((source, start + count, stop))
            count -= stop - start

    def join(self):
        return b"".join(self._data(piece) for piece in reversed(self.pieces))


class _Virtual:
    """body[:head] followed by a _Tail, as splice_plan looks at a body (size, last byte, slices)."""

    def __init__(self, body, head, tail):
        self.body, self.head, self.tail = body, head, tail

    def __len__(self):
        return self.head + len(self.tail)

    def endswith(self, suffix):
        last = self.tail.last_byte() if len(self.tail) else self.body[self.head - 1 : self.head]
        return last == suffix

    def __getitem__(self, where):
        start, stop = max(0, where.start), where.stop
        if stop <= self.head:
            return self.body[start:stop]
        return self.body[start : self.head] + self.tail.first(stop - max(start, self.head))


def _finish_items(ctx, args, groups, total):
    """The result of the planned call; writes everything (one event) unless a preview."""
    warnings, files, items = [], [], []
    for group in groups:
        _compose_group(group)
        entry, item_results, file_warnings = _group_result(ctx, args, group)
        files.append(entry)
        items += item_results
        warnings += file_warnings
        for _item, change in group.changes:
            warnings += change.warnings
    items.sort(key=lambda entry: entry["index"])
    changed = any(group.changed for group in groups)
    result = {"status": "ok", "changed": bool(changed), "files": files, "items": items}
    if args.get("preview"):
        result["preview"] = True
        refused = dict.fromkeys(exc for _index, _file, exc in _unwritable(groups))  # (one per file)
        warnings += [_preview_refusal(ctx, exc) for exc in refused]  # (as the single-file tools say it)
        warnings += [] if changed else _unchanged(groups)  # (as the edit would say)
    else:
        unwritable = _unwritable(groups)
        if unwritable:
            raise ItemsFailed(unwritable, total)
        warnings += _commit_items(ctx, groups, result)
    if warnings:
        result["warnings"] = _local_warnings(ctx, warnings)
    return result


def _unwritable(groups, failed=()):
    """The failures (index, file, error) of every item of each file that changes and that the
    commit would refuse for want of permission (check_writable, as a preview warns): the commit
    named only the first such file, with no item, so a retry met the next one. Files with an item
    in `failed` (indexes of items that failed already) are passed: what they would hold is unknown."""
    found = []
    for group in groups:
        if group.opened is None or any(item["index"] in failed for item in group.items):
            continue
        if group.new_body is None:
            _compose_group(group)
        if group.changed:
            try:
                check_writable(group.opened.place, group.opened.st)
            except ToolError as exc:
                found += [(item["index"], group.file, exc) for item in group.items]
    return found


def _commit_items(ctx, groups, result):
    """Write the files that change, as one event (its id into `result`); the warnings: what was
    kept as chips and written, or that nothing changed (a newline-only hunk said what it did)."""
    if result["changed"]:
        event_id, write_warnings = _commit_groups(ctx, [g for g in groups if g.changed])
        _put_event(result, event_id)
        return write_warnings + _keep_deleted(ctx, groups)  # (once the text is gone)
    return _unchanged(groups)


def _unchanged(groups):
    """The warning of items that change nothing (none when a newline-only hunk said what it did)."""
    if all(change.newline_only for group in groups for _item, change in group.changes):
        return []
    return [("w.unchanged_files" if len(groups) > 1 else "w.unchanged", {})]


def _compose_group(group):
    """A file's new body and pieces from its changes, its item plans in line order, and whether
    it changes at all."""
    group.new_body, group.pieces = _compose(group.opened.text, group.changes)
    group.plans = [_ItemPlan(*c.plan, i, c) for i, c in sorted(group.changes, key=_line_order)]
    group.changed = group.new_body != group.opened.text.body or not group.exists or group.delete_file


def _keep_deleted(ctx, groups):
    """Deleted text of delete items is kept as chips, as be-delete keeps it."""
    warnings = []
    for group in groups:
        for item, change in group.changes:
            if change.chip_text:
                chip_id, chip_warnings = ChipStore(ctx).save(
                    "be-edit", dict(item["args"]), "", change.chip_text
                )
                warnings += chip_warnings
                if chip_id:
                    warnings.append(("w.deleted_chip", {"id": chip_id}))
    return warnings


def _group_result(ctx, args, group):
    """One file's entry of the result, and its items' new lines."""
    opened, new_body, plans = group.opened, group.new_body, group.plans
    text = opened.text
    total = line_count(new_body) if not group.delete_file else 0
    entry = {"file": opened.file, "path": opened.real, "total": total}
    items, delta, written, warnings = [], 0, [], []
    for _a, _block, _b, item, change in plans:
        result = {"index": item["index"], "file": item["file"], "op": item["op"]}
        result.update(added=change.added, removed=change.last - change.first + 1)
        if change.added:
            start = change.first + delta
            result.update(start=start, end=start + change.added - 1)
            written.append((start, start + change.added - 1))
        items.append(result)
        delta += change.added - (change.last - change.first + 1)
    if not args.get("brief"):
        entry["diff"] = _items_diff(args, opened, new_body, plans)
        combined = Change(text, (0, new_body, len(text.body)), 1, text.total(), total, {})
        combined.plans = _item_plans(text.body, new_body, plans)
        combined.keep_scan = not args.get("preview")
        if group.exists and not group.delete_file:
            entry["balance"] = balance_sentence(ctx, opened, combined, warnings)
        else:
            entry["balance"] = tr(ctx.lang, "b.not_checked")
    view = _group_view(group, written, total)
    if view:
        entry["viewed_code_id"] = view
    return entry, items, warnings


def _group_view(group, written, total):
    """The viewed_code_id of the lines the items of one file wrote (`written`: (first, last) each),
    first to last (a preview's: as they would stand); None when they wrote none or the file goes."""
    if not written or group.delete_file:
        return None
    new_body, (first, last) = group.new_body, (written[0][0], written[-1][1])
    a, b = line_span(new_body, first, last)
    unique = (new_body, a, view_unique(new_body, new_body[a:b], a))
    return make_view_id(group.opened.real, first, last, new_body[a:b], total, unique)


def _item_plans(body, new_body, plans):
    """The items' plans [(a, block, b), ...] when, applied together, they make `new_body` (checked,
    not assumed), so the post-edit check scans around each item; else None (the whole body)."""
    ordered, end = [], 0
    for a, block, b, *_rest in sorted(plans, key=lambda plan: (plan.a, plan.b)):
        if a < end:
            return None
        ordered.append((a, block, b))
        end = b
    pieces, done = [], 0
    for a, block, b in ordered:
        pieces += [memoryview(body)[done:a], block]
        done = b
    pieces.append(memoryview(body)[done:])
    return ordered if b"".join(pieces) == new_body else None


def _items_diff(args, opened, new_body, plans):
    """A unified diff of all changes of one file: nearby changes share a hunk, each hunk is
    computed on a small window of the old and new file, and numbered where that window stands."""
    text, out, delta = opened.text, [], 0
    old_total, new_total = text.total(), line_count(new_body)
    for cluster in _clusters(plans):
        changes = [plan.change for plan in cluster]
        first, last = min(c.first for c in changes), max(max(c.last, c.first - 1) for c in changes)
        grown = sum(c.added - (c.last - c.first + 1) for c in changes)
        # one line more than the context on each side: the final-newline rule may change a neighbour
        old_first, old_last = max(1, first - 4), min(old_total, last + 4)
        new_first, new_last = old_first + delta, min(new_total, old_last + delta + grown)
        old_lines = _lines_window(text, text.body, old_first, old_last)
        new_lines = _lines_window(text, new_body, new_first, new_last)
        if args.get("format") == "plain":
            out.append(plain_diff(old_lines, new_lines, old_first))
        else:
            hunks = full_diff(opened.file, old_lines, new_lines).split("\n")
            out += (hunks[:2] if not out else []) + [
                _shift_hunk(line, old_first - 1, new_first - 1) for line in hunks[2:]
            ]
        delta += grown
    return "\n".join(out)


def _clusters(plans, context=3):
    """Plans grouped so that hunks (with `context` lines around each change) never touch."""
    clusters = []
    for plan in plans:
        change = plan.change
        if clusters and change.first - max(c.change.last for c in clusters[-1]) <= 2 * context + 2:
            clusters[-1].append(plan)
        else:
            clusters.append([plan])
    return clusters


_HUNK_HEADER = _LazyPattern(r"@@ -([0-9]{1,15})((?:,[0-9]{1,15})?) \+([0-9]{1,15})((?:,[0-9]{1,15})?) @@")


def _shift_hunk(line, old_offset, new_offset):
    match = _HUNK_HEADER.match(line)
    if not match:
        return line
    old, new = int(match.group(1)) + old_offset, int(match.group(3)) + new_offset
    return f"@@ -{old}{match.group(2)} +{new}{match.group(4)} @@" + line[match.end() :]


def _commit_groups(ctx, groups):
    """Every changed file of a be-edit as one journaled commit and one snapshot event
    (docs/transactions.md): all written, or none."""
    summary = (
        f"edit: {_counted(len(groups), 'file')}, {_counted(sum(len(g.changes) for g in groups), 'item')}"
    )
    files, listings = [], {}
    for group in groups:
        opened = group.opened
        place = opened.place = _reopened(ctx, opened.place)
        st = _settled_stat(ctx, place, opened.st, listings)
        payload = None if group.delete_file else _items_payload(opened, group)
        files.append(FileCommit(place, st, opened.raw, payload))
        if len(groups) > _OPEN_FOLDERS:
            place.release()
    return commit_files(ctx, "edit", files, summary)


def _items_payload(opened, group):
    """The new file as pieces; unchanged stretches are ranges of the old file (copied in the kernel)."""
    text, raw = opened.text, opened.raw
    if text.wire or raw is None:
        return payload_of(text.to_bytes(group.new_body))
    offset, pieces = len(text.bom), [(raw, 0, len(text.bom), 0)]
    for source, start, stop in reversed(group.pieces):
        if source is None:
            pieces.append((raw, offset + start, offset + stop, offset + start))
        else:
            pieces.append((bytes(source), start, stop, None))
    return [p for p in pieces if p[2] > p[1]]


# --- patch: a unified diff as edit items (docs/cli.md#edit-and-patch) -----------------------------

_PATCH_HUNK = _LazyPattern(r"@@ -([0-9]{1,15})(?:,([0-9]{1,15}))? \+([0-9]{1,15})(?:,([0-9]{1,15}))? @@")
# Changes a patch cannot apply: git header lines of renames, copies, binary patches and submodules
# (mode 160000: no file), outside a mail's message and the text after a git section's hunks
# (_refused_line); and diff's, git's and Subversion's words on a binary file, wherever they stand.
_PATCH_REFUSED = ("rename from", "rename to", "copy from", "copy to", "GIT binary patch")
_SUBMODULE = _LazyPattern(r"(?:(?:new|deleted) file mode|(?:old|new) mode|index \w+\.\.\w+) 160000")
_BINARY_FILE = _LazyPattern(r"Binary files .+ differ|Cannot display: file marked as a binary type\.")
# (a mail's first lines: `git format-patch`'s `From <commit> `, an mbox `From <sender> `, headers)
_MAIL_START = _LazyPattern(r"From \S+ \S|From: |Subject: ")
# (where a mail's message ends: its `---`, or a line only a diff has)
_MAIL_END = _LazyPattern(
    r"---\s*$|diff --git |index [0-9a-f]+\.\.[0-9a-f]+|@@ -\d|(?:dis)?similarity index \d+%"
    r"|(?:new|deleted) file mode \d|(?:old|new) mode \d"
)


def _refused_line(line, git, message):
    """Whether a patch line asks for a change a patch cannot apply. git's header words count where
    a header may stand: not in a mail's message (`message`: _in_mail_message), and not after the
    hunks of a git section (the next mail's text), but before any `diff --git` line too (a section
    pasted without it)."""
    if _BINARY_FILE.fullmatch(line):
        return True
    header = not message and not (git is not None and git["hunks"])
    return header and (line.startswith(_PATCH_REFUSED) or bool(_SUBMODULE.fullmatch(line)))


def _in_mail_message(lines, pos, before):
    """Whether lines[pos] stands in a mail's message (`git format-patch`, an mbox): from its `From`
    or `Subject:` line to the `---` line after the message, or to a line only a diff has (a
    `diff --git`, `index` or `@@` line, a file header); `before`: whether the line before did."""
    line = lines[pos].rstrip("\r")
    if _MAIL_START.match(line):
        return True
    return before and not _MAIL_END.match(line) and not _file_header_at(lines, pos)


def parse_patch(patch):
    """Edit items from a unified diff (`diff -u`, `git diff`): one item (op "patch") per hunk, and
    one per git header that creates or deletes an empty file without a hunk. No line inside a hunk
    is ignored (docs/cli.md#edit-and-patch)."""
    if not isinstance(patch, str) or not patch.strip():
        raise invalid("patch_empty")
    lines = patch.split("\n")
    if lines[-1] == "":
        lines.pop()  # (the patch's own final newline)
    items, old_path, new_path, pos, git, message = [], None, None, 0, None, False
    sections = collections.Counter()  # (---/+++ headers seen per file)
    while pos < len(lines):
        line = lines[pos].rstrip("\r")
        message = _in_mail_message(lines, pos, message)
        if _refused_line(line, git, message):
            raise invalid("patch_unsupported", what=line[:60])
        if line.startswith("diff --git "):
            _git_only_item(items, git)
            git, old_path, new_path = _git_header(line), None, None
        elif git is not None and line.startswith(("new file mode", "deleted file mode", "new mode")):
            _git_mode(git, line)
        elif _file_header_at(lines, pos):
            empty = _sides_empty(lines, pos + 2)
            old_path, new_path = _patch_paths(
                line[4:], lines[pos + 1].rstrip("\r")[4:], empty, git is not None
            )
            if old_path is None and new_path is None:
                raise invalid("patch_both_null", line=pos + 1)
            git = _git_of_section(git, old_path, new_path, pos)
            sections[new_path if new_path is not None else old_path] += 1
            pos += 2
            _hunk_opens(lines, pos, new_path if new_path is not None else old_path)
            continue
        elif _PATCH_HUNK.match(line):
            pos = _read_hunk(lines, pos, items, (old_path, new_path, git), sections)
            continue
        pos += 1
    _git_only_item(items, git)
    if not items:
        raise invalid("patch_empty")
    _whole_file_hunks_alone(items)
    _repeated_hunks(items)
    return items


def _repeated_hunks(items):
    """INVALID_ARGUMENT for a hunk that repeats an earlier one of its file line for line, at the
    same place: a hunk with context would overlap its twin, but one without (`-U0`, only `+`
    lines) added its lines twice, as git apply does. The intended change is the lines once."""
    seen = {}
    for item in (item for item in items if "tagged" in item):
        key = (item["file"], item["old_start"], tuple(item["tagged"]))
        if key in seen:
            raise invalid("patch_repeated", hunk=item["hunk"], first=seen[key], file=item["file"])
        seen[key] = item["hunk"]


def _read_hunk(lines, pos, items, header, sections):
    """The hunk at lines[pos] appended to `items` as an item; the position after it. `header`:
    the old and new path of the file header above it and its git header (or None)."""
    old_path, new_path, git = header
    if old_path is None and new_path is None:
        raise invalid("patch_no_header", line=pos + 1)
    file = new_path if new_path is not None else old_path
    number = 1 + sum(1 for item in items if item["file"] == file)
    new_start, start = int(_PATCH_HUNK.match(lines[pos].rstrip("\r")).group(3)), pos
    hunk, pos, warnings = _patch_hunk(lines, pos, file, number)
    item = _hunk_item(len(items), old_path, new_path, hunk, number)
    item.update(warnings=warnings + _mode_warnings(git, file), new_start=new_start)
    item.update(eol=_added_eol(lines, start, pos), section=sum(sections.values()))  # (its header's number)
    items.append(item)
    return pos


def _note_earlier_sections(items):
    """The hunks of one file (`items`, in patch order, whatever names they gave it: `f`, `./f`, a
    link): each of a later ---/+++ section gets the earlier sections' hunks (`earlier`, for
    _refuse_a_later_section and _refuse_a_section_insertion); each says whether a later hunk of
    its section follows it (`followed`: then it is not the one at the end of the file,
    _refuse_another_place)."""
    hunks = [item for item in items if "section" in item]
    later = set()  # (the sections of the hunks after it)
    for item in reversed(hunks):
        item["followed"] = item["section"] in later
        later.add(item["section"])
    before = {}  # (each section: the hunks of the file before its first, in patch order)
    for n, item in enumerate(hunks):
        before.setdefault(item["section"], hunks[:n])
    for item in hunks:
        item["earlier"] = before[item["section"]]


def _added_eol(lines, header, end):
    """The line ending of a hunk's added lines (lines[header] is its @@ line, `end` is past it):
    CRLF when each ends with a \r beyond the one a diff saved with CRLF adds to all its lines."""
    saved = lines[header].endswith("\r")
    added = [line[:-1] if saved else line for line in lines[header + 1 : end] if line.startswith("+")]
    ended = added[:-1] or added  # (a last line without a newline has no \r either: `a\r\nb`)
    return "\r\n" if added and all(line.endswith("\r") for line in ended) else "\n"


def _git_of_section(git, old_path, new_path, pos):
    """The `diff --git` header a ---/+++ header at `pos` belongs to: the one read last when it
    names the same files; None after one whose hunks came (a plain diff follows); a git header
    without a hunk followed by other names is INVALID_ARGUMENT (its own change was dropped)."""
    if git is None or (old_path in (None, git["old"]) and new_path in (None, git["new"])):
        return git
    if git["hunks"]:
        return None
    named = git["new"] if git["new"] is not None else git["old"]
    raise invalid("patch_names_differ", line=pos + 1, file=new_path or old_path, git=named)


def _whole_file_hunks_alone(items):
    """A hunk that creates or deletes its file is that file's only hunk: two creations of one file
    (two versions of it) were joined line after line, in silence."""
    counts = collections.Counter(item["file"] for item in items)
    for item in items:
        if (item["create"] or item["delete_file"]) and counts[item["file"]] > 1:
            raise invalid("patch_one_hunk", hunk=item["hunk"], file=item["file"], count=counts[item["file"]])


def _file_header_at(lines, pos):
    return lines[pos].startswith("--- ") and pos + 1 < len(lines) and lines[pos + 1].startswith("+++ ")


def _past_blank_lines(lines, pos):
    """The position of the first line from `pos` on that is not blank (or the end)."""
    while pos < len(lines) and not lines[pos].strip():
        pos += 1
    return pos


def _hunk_opens(lines, pos, file):
    """A file header is followed by an @@ line (blank lines aside); anything else is INVALID_ARGUMENT,
    since hunk lines there would be skipped like the text around a patch."""
    header, pos = pos - 1, _past_blank_lines(lines, pos)
    if pos == len(lines):
        raise invalid("patch_no_hunk_end", header=header, file=file, hint="patch_no_hunk.hint")
    if not _PATCH_HUNK.match(lines[pos]):
        key = "patch_bare_hunk" if lines[pos].startswith("@@") else "patch_no_hunk"  # (`@@` alone)
        raise invalid(key, "patch_no_hunk.hint", header=header, line=pos + 1, text=lines[pos][:80], file=file)


def _pair_in_body(lines, pos, entries, counts):
    """Whether the "--- X" "+++ Y" pair at `pos` inside a hunk is a removed line "-- X" and an added
    "++ Y" (SQL, Lua and Haskell comments) rather than the next file's header: the header's counts
    still owe both lines, the hunk read by its counts from here ends where a hunk, a file or the
    patch ends, and a pair right before an @@ line does not name files as headers do."""
    owed = [count - seen for count, seen in zip(counts, _hunk_counts(entries))]
    end = _counted_end(lines, pos, *owed) if min(owed) >= 1 else None
    if end is None:
        return False
    after = lines[end].rstrip("\r") if end < len(lines) else ""
    if after[:1] in (" ", "-", "+") and not _file_header_at(lines, end) and after != "-- ":
        return False  # the counts stop inside the body: they are wrong, so they decide nothing
    return not (end == pos + 2 and after.startswith("@@") and _names_files(lines[pos], lines[pos + 1]))


def _counted_end(lines, pos, old, new):
    """Where a hunk that still owes `old` and `new` lines at `pos` ends when read by those counts
    (past its '\\' lines), or None when a line on the way is no hunk line or the counts run over."""
    while old > 0 or new > 0:
        sign = (lines[pos].rstrip("\r")[:1] or " ") if pos < len(lines) else "@"
        if sign not in "-+ \\":
            return None
        old, new, pos = old - (sign in "- "), new - (sign in "+ "), pos + 1
        if old < 0 or new < 0:
            return None
    while pos < len(lines) and lines[pos].startswith("\\"):
        pos += 1
    return pos


def _names_files(old_line, new_line):
    """Whether '--- X' and '+++ Y' name files as headers do: a/ and b/, /dev/null, one name twice,
    a tab before a timestamp."""
    names = [line.rstrip("\r")[4:] for line in (old_line, new_line)]
    plain = [name.split("\t")[0] for name in names]
    return (
        any("\t" in name for name in names)
        or plain[0] == plain[1]
        or "/dev/null" in plain
        or (plain[0].startswith("a/") and plain[1].startswith("b/"))
    )


def _git_header(line):
    """The paths of `diff --git a/X b/Y` (used when no ---/+++ follows: an empty file created or
    deleted by a header alone)."""
    rest = line[len("diff --git ") :]
    half = len(rest) // 2  # (a/X b/X: the two names are alike; unusual names are quoted)
    old, new = (rest[:half], rest[half + 1 :]) if rest[half : half + 1] == " " else (rest, rest)
    # (the names as written: `a/notes ` ends in a space)
    old, new = _without_ab(*(_unquote_path(p) for p in (old, new)))
    return {"old": old, "new": new, "mode": None, "hunks": 0}


def _git_mode(git, line):
    """A git header's `new file mode`, `deleted file mode` or `new mode` line: whether it creates or
    deletes the file, and a mode other than a plain file's that the patch would set."""
    words = line.split()
    if words[0] in ("new", "deleted") and words[1] == "file":
        git["mode"] = words[0]
    if words[0] == "new" and words[-1] not in ("100644", "mode"):
        git["sets"] = words[-1]


def _mode_warnings(git, file):
    """The warning, on a git header's first hunk, that the mode it sets is not applied."""
    if git is None:
        return []
    git["hunks"] += 1
    if git["hunks"] > 1 or not git.get("sets"):
        return []
    return [("w.patch_mode", {"file": file, "mode": git["sets"]})]


def _git_only_item(items, git):
    """A git header that creates (`new file mode`) or deletes (`deleted file mode`) a file with no
    hunk: the file is empty; one item creates or deletes it."""
    if git is None or git["hunks"] or git["mode"] is None:
        return
    create = git["mode"] == "new"
    old_path, new_path = (None, git["new"]) if create else (git["old"], None)
    items.append(_hunk_item(len(items), old_path, new_path, (0, [], [], False, []), 1))
    items[-1]["warnings"] = []


def _patch_paths(old, new, empty=(False, False), git=True):
    """(old, new) paths of a ---/+++ header: _header_name of each, `a/` `b/` prefixes stripped (also
    from one side when the other names that file bare: `--- f.txt` `+++ b/f.txt`; git's other
    one-letter prefixes in a git section), /dev/null None. `empty`: whether the first hunk holds no
    line on each side (only then is a side stamped with the epoch missing)."""
    return _without_ab(*(_header_name(p, side_empty) for p, side_empty in zip((old, new), empty)), git)


def _header_name(text, empty=False):
    """The file a ---/+++ line names (the text after its 4 characters): up to a tab, as it is (a
    timestamp follows, or git marks a name ending in a space: `notes \t`), else without the spaces
    around it; git's quoted names decoded. None for /dev/null, and, when the hunk holds no line on
    this side (`empty`), for a side stamped with the epoch (`diff -N`'s mark of a missing file; a
    file last changed at time 0 stays itself)."""
    name, tab, stamp = text.partition("\t")
    name = _unquote_path(name if tab else name.strip())
    return None if name == "/dev/null" or (empty and tab and _is_epoch(stamp)) else name


def _sides_empty(lines, pos):
    """Whether the hunk at lines[pos] (the first after a file header) holds no line on its old
    side, and on its new side, by its header's counts (`@@ -0,0 +1,2 @@`: (True, False))."""
    pos = _past_blank_lines(lines, pos)  # (blank lines may stand before it, as _hunk_opens allows)
    match = _PATCH_HUNK.match(lines[pos].rstrip("\r")) if pos < len(lines) else None
    if match is None:
        return False, False
    return match.group(2) == "0", match.group(4) == "0"


_STAMP = _LazyPattern(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.0+)? ([+-])(\d\d)(\d\d)")


def _is_epoch(stamp):
    """Whether a header's timestamp (`1970-01-01 00:00:00.000000000 +0000`, in any zone) is the
    epoch: a zone's offset is less than a day, so its date is the epoch's or the day before.
    (No `datetime`: the executable leaves it out, build.spec.)"""
    m = _STAMP.fullmatch(stamp.strip())
    if not m or m[1][:10] not in ("1970-01-01", "1969-12-31"):
        return False
    hours, minutes, seconds = (int(part) for part in m[1][11:].split(":"))
    offset = (int(m[3]) * 60 + int(m[4])) * 60 * (1 if m[2] == "+" else -1)
    day = 0 if m[1].startswith("1970") else -86400
    return day + hours * 3600 + minutes * 60 + seconds - offset == 0


_GIT_PREFIXES = {"a/", "b/", "c/", "i/", "o/", "w/"}


def _without_ab(old, new, git=True):
    """Header paths with their `a/` `b/` prefixes cut: from both when both have them; one side's
    when the other side names that file bare (one side prefixed, as models mix them)."""
    if (old or "a/").startswith("a/") and (new or "b/").startswith("b/"):
        return old and old[2:], new and new[2:]
    return _other_prefixes_cut(old, new, git) if old and new else (old, new)


def _other_prefixes_cut(old, new, git):
    """Two header names with git's other one-letter prefixes cut (`i/x`, `w/x`: diff.mnemonicPrefix,
    in a git section only: `diff -u i/f w/f` compares real folders), or the bare one of a name
    written once bare and once with its prefix (`f.txt`, `b/f.txt`)."""
    if git and old[:2] != new[:2] and {old[:2], new[:2]} <= _GIT_PREFIXES and old[2:] == new[2:]:
        return old[2:], new[2:]
    if f"a/{new}" == old or f"b/{old}" == new:
        old = new = min(old, new, key=len)
    return old, new


def _unquote_path(path):
    if len(path) >= 2 and path[0] == path[-1] == '"':  # git quotes unusual names, C-style
        import codecs

        return codecs.escape_decode(path[1:-1].encode("utf-8", "surrogateescape"))[0].decode(
            "utf-8", "surrogateescape"
        )
    return path


def _patch_hunk(lines, pos, file, number):
    """One hunk: (old start, old lines, new lines, ends without newline, tagged lines), the position
    after it and its warnings. Its body runs to the next hunk, file header or end of the patch; a
    header that miscounts it is recounted from the body, with a warning; a line that is not
    ' ', '-', '+', '\\ ' (`\\ No newline at end of file`) or empty is INVALID_ARGUMENT naming it."""
    header = lines[pos].rstrip("\r")
    match = _PATCH_HUNK.match(header)
    old_start = int(match.group(1))
    counts = tuple(int(match.group(n)) if match.group(n) is not None else 1 for n in (2, 4))
    entries, no_newline = [], set()  # (sign, text, was an empty line); the sides that end without a newline
    pos += 1
    while pos < len(lines):
        raw = lines[pos]
        line = raw.rstrip("\r")  # (a patch of a CRLF file saved with CRLF ends its lines with \r\r)
        end = _hunk_ends(lines, pos, line, entries, counts)
        if end is not None:
            pos = end
            break
        if line.startswith("\\ "):  # (of the line above: old side, new side or both; `\item` is no marker)
            no_newline |= {"-": {"old"}, "+": {"new"}, " ": {"old", "new"}}[
                entries[-1][0] if entries else " "
            ]
        elif line[:1] in ("-", "+", " ") or line == "":
            entries.append((line[:1] or " ", line[1:], line == ""))
        else:
            raise invalid("patch_stray_line", line=pos + 1, text=line[:80], hunk=number, file=file)
        pos += 1
    entries, warnings = _recount(entries, counts, header, file, number)
    _hunk_holds_enough(entries, counts, bool(warnings) and (lines, pos), file, number)
    tagged = [(sign, text) for sign, text, _empty in entries]
    old = [text for sign, text in tagged if sign != "+"]
    new = [text for sign, text in tagged if sign != "-"]
    return (old_start, old, new, no_newline, tagged), pos, warnings


def _hunk_holds_enough(entries, counts, miscounted, file, number):
    """INVALID_ARGUMENT for a hunk that holds no line, one that counts old lines but holds only `+`
    lines (nothing tells where they go), and a miscounted one (`miscounted`: the patch's lines
    and where the hunk ended) before a ---/+++ pair naming its file again."""
    if miscounted:
        _unclear_pair_after(*miscounted, file, number)
    if not entries:
        raise invalid("patch_empty_hunk", hunk=number, file=file)
    if counts[0] and all(sign == "+" for sign, _text, _empty in entries):
        raise invalid("patch_no_old_lines", hunk=number, file=file, count=counts[0])


def _unclear_pair_after(lines, pos, file, number):
    """A miscounted hunk that ends at a `---`/`+++` pair naming its own file again: the pair may
    be its removed and added lines (`-- X`, `++ Y`) or a second header of that file, and the
    counts that would tell are wrong, so the patch is refused (INVALID_ARGUMENT), never read one
    way in silence (a change was dropped)."""
    if pos < len(lines) and _file_header_at(lines, pos):
        old, new = _patch_paths(lines[pos].rstrip("\r")[4:], lines[pos + 1].rstrip("\r")[4:])
        if file in (old, new):
            raise invalid("patch_unclear_pair", hunk=number, file=file, line=pos + 1)


def _hunk_ends(lines, pos, line, entries, counts):
    """Where the patch goes on when the hunk ends at `pos` (`line`, its CR cut): there, at the next
    hunk, `diff --git` or file header (unless the header's counts hold that pair as two of its
    lines), or past git format-patch's signature at the end; None inside the hunk."""
    if _PATCH_HUNK.match(line) or line.startswith("diff --git "):
        return pos
    if _file_header_at(lines, pos) and not _pair_in_body(lines, pos, entries, counts):
        return pos
    if (line == "-- " and _signature_follows(lines, pos, entries, counts)) or (
        _between_files(lines, pos) and _hunk_counts(entries) == counts  # (the cheap test first: each line)
    ):
        return pos  # (skipped up to the next file header, as text before the first one is)
    return None


def _between_files(lines, pos):
    """Whether lines[pos] starts lines that diff tools write between the files of a patch, up to
    the next file header, `diff --git` or the end: `diff -ru`'s command and `Only in` lines,
    Subversion's `Index:` and `===` lines, and the words on a binary file (refused: _BINARY_FILE).
    (One followed by hunk lines is no such line: an undercounted hunk's `=====` underline whose
    space an editor stripped.)"""
    while pos < len(lines) and (
        _BETWEEN_FILES.match(lines[pos].rstrip("\r")) or _blank_after_hunk(lines[pos])
    ):
        pos += 1  # (blank lines too: a pasted patch ends with one)
    return pos == len(lines) or _file_header_at(lines, pos) or lines[pos].startswith("diff --git ")


def _blank_after_hunk(line):
    """Whether a line after a hunk that holds its counts is blank text, not a hunk line: a line of
    white space that does not start with a space (` `, a context line of an empty line, is the
    hunk's: its header undercounted it)."""
    return not line.strip() and not line.startswith(" ")


_BETWEEN_FILES = _LazyPattern(
    r"diff |Only in |Index: |Common subdirectories: |={20,}$|Cannot display: |svn:mime-type = |Binary files "
)


def _hunk_counts(entries):
    return (sum(sign != "+" for sign, _t, _e in entries), sum(sign != "-" for sign, _t, _e in entries))


def _signature_follows(lines, pos, entries, counts):
    """`-- ` then a version line (`2.43.0`), after a hunk that holds what it counts: a mail's
    signature, at the end of the patch or before the next mail of a series (a hunk line after it
    makes the `-- ` a removed "- " line of a miscounted hunk)."""
    after = lines[pos + 1].rstrip("\r") if pos + 1 < len(lines) else ""
    return _hunk_counts(entries) == counts and bool(re.fullmatch(r"\d+(?:\.\w+)+", after))


def _recount(entries, counts, header, file, number):
    """The hunk's lines, and a warning when its header's counts are not what its body holds.
    Empty lines at its end are blank lines after the hunk when dropping them makes the counts
    right (or when the counts are wrong anyway), not empty context lines."""
    if _hunk_counts(entries) == counts:
        return entries, []
    body = list(entries)
    while body and body[-1][2]:
        body.pop()
        if _hunk_counts(body) == counts:
            return body, []
    old_count, new_count = _hunk_counts(body)
    said = header.split("@@")[1].strip()
    fields = {"hunk": number, "file": file, "header": said, "old": old_count, "new": new_count}
    return body, [("w.hunk_recounted", fields)]


def _hunk_number(item):
    """The number a message gives a patch's hunk item (its place in its file's section)."""
    return item.get("hunk", item["index"] + 1)


def _hunk_item(index, old_path, new_path, hunk, number=1):
    file = new_path if new_path is not None else old_path
    item = {"index": index, "op": "patch", "file": file, "args": {"file": file}, "hunk": number}
    item["plan"] = lambda ctx, opened, exists: _hunk_change(ctx, item, opened, exists, hunk)
    item["create"], item["delete_file"] = old_path is None, new_path is None
    item["old_start"], item["tagged"] = hunk[0], hunk[4]  # (_repeated_hunks, _refuse_a_later_section)
    return item


def _hunk_change(ctx, item, opened, exists, hunk):
    """The Change a hunk makes: at its stated line when its old lines are there, else at the one
    place they are (a warning names the offset); several -> AMBIGUOUS, none -> MISMATCH."""
    cut = _without_bom(opened, hunk)
    change = _hunk_plan(ctx, item, opened, exists, cut)
    if cut[1] != hunk[1] and change.first > 1:  # (a line with the BOM is line 1, or nowhere)
        raise _hunk_mismatch(opened, item, _file_lines(opened), cut[1], 1, guess=False)
    change.warnings = list(item.get("warnings") or []) + change.warnings
    old, new = hunk[1][:1], hunk[2][:1]  # (the BOM is kept apart: one side's alone is not applied)
    if cut is not hunk and old and new and old[0].startswith("\ufeff") != new[0].startswith("\ufeff"):
        change.warnings.append(("w.hunk_bom_kept", {"hunk": _hunk_number(item), "file": item["file"]}))
    return change


def _bom_cut(tagged):
    """(sign, line) pairs with a BOM cut from the first line of each side (old, new)."""
    cut, seen = [], set()
    for sign, line in tagged:
        sides = {" ": ("old", "new"), "-": ("old",), "+": ("new",)}[sign]
        if any(side not in seen for side in sides) and line.startswith("\ufeff"):
            line = line[1:]
        seen.update(sides)
        cut.append((sign, line))
    return cut


def _without_bom(opened, hunk):
    """git shows a UTF-8 file's BOM at the start of its first line; the Text keeps the BOM apart."""
    old_start, old, new, no_newline, tagged = hunk
    if not (opened.text.bom and old_start <= 1 and tagged):
        return hunk
    cut = _bom_cut(tagged)
    if not opened.text.body and cut[:1] == [("-", "")]:  # (a file of its BOM alone: no line at all)
        old_start, cut = 0, cut[1:]
    old = [line for sign, line in cut if sign != "+"]
    new = [line for sign, line in cut if sign != "-"]
    return old_start, old, new, no_newline, cut


def _hunk_creation(item, opened, exists, new, no_newline):
    """The Change of a hunk that creates its file (`--- /dev/null`)."""
    if exists:
        raise ToolError("INVALID_ARGUMENT", "patch_exists", file=item["file"])
    eol = item.get("eol", "\n")  # (a file created by a diff of a CRLF file is one too)
    content = eol.join(new) + ("" if no_newline or not new else eol)
    return _write_change({"content": content, "force": item.get("force")}, opened, exists=False)


def _hunk_plan(ctx, item, opened, exists, hunk):
    old_start, old, new, no_newline, tagged = hunk
    file = item["file"]
    if item["create"]:
        return _hunk_creation(item, opened, exists, new, no_newline)
    if not exists:
        raise not_found(file, ctx.root or ctx.cwd, opened.real)
    lines = _file_lines(opened)
    if item["delete_file"]:
        return _hunk_deletion(ctx, item, opened, lines, old)
    if not old:  # a pure insertion without context: its stated place is all there is
        change = _hunk_insertion(ctx, item, opened, len(lines), old_start, new)
        change.warnings += _newline_words(item, change, hunk, old_start == len(lines))
        return change
    removed = [n for n, (sign, _line) in enumerate(t for t in tagged if t[0] != "+") if sign == "-"]
    start, warnings = _hunk_position(opened, item, lines, (old, new), old_start, removed)
    # (the new side, context lines with it: an added comment above a context line is no prose
    # that an added `// ...` below that line belongs to; the context lines are the file's own)
    kept = "\n".join(line for sign, line in tagged if sign != "+")
    placeholder_guard(item, opened, "\n".join(line for sign, line in tagged if sign != "-"), kept, patch=True)
    change = _hunk_splice(opened, start, start + len(old) - 1, tagged)
    change.warnings += warnings + _newline_words(item, change, hunk, start + len(old) - 1 == len(lines))
    return change


def _newline_words(item, change, hunk, at_end):
    """The warning of a hunk whose `\\ No newline` marker is not applied (the file keeps its
    final-newline state): all it changes (nothing is written for it), or a part of what it does,
    when it ends the file (`at_end`) and one side of it has the marker."""
    _old_start, old, new, no_newline, _tagged = hunk
    where = {"hunk": _hunk_number(item), "file": item["file"]}
    if no_newline and old == new:
        change.newline_only = True
        return [("w.hunk_newline_only", where)]
    return [("w.hunk_newline_kept", where)] if len(no_newline) == 1 and at_end else []


def _hunk_deletion(ctx, item, opened, lines, old):
    """The Change of a hunk that deletes its file (`+++ /dev/null`): its lines must be the file's
    whole content, and the file no symbolic link (the file it points to would go, the link stay)."""
    file = item["file"]
    if opened.place.linked or os.path.islink(_full_path(ctx, file)):  # (a link when walked, or now)
        hunk = _hunk_number(item)
        raise ToolError("INVALID_ARGUMENT", "patch_delete_link", hunk=hunk, file=file, path=opened.real)
    if not _lines_match(lines, 0, old, True) or len(lines) != len(old):
        raise _hunk_mismatch(opened, item, lines, old, 1, "patch_delete_mismatch", count=len(lines))
    total = opened.text.total()
    change = Change(opened.text, (0, b"", len(opened.text.body)), 1, total, 0, {}, at=0)
    if not _lines_match(lines, 0, old, False):
        change.warnings.append(("w.hunk_whitespace", {"hunk": str(item.get("hunk", 1)), "file": file}))
    return change


def _hunk_insertion(ctx, item, opened, total, old_start, new):
    """The Change of a hunk without context lines: its lines go after line `old_start`, never
    clamped to the end of the file (docs/cli.md#edit-and-patch)."""
    file = item["file"]
    if old_start > total:
        hunk = _hunk_number(item)
        fields = {"hunk": hunk, "file": file, "line": old_start, "total": total}
        raise ToolError("OUT_OF_RANGE", "patch_past_end", data={"total": total}, **fields)
    _refuse_a_section_insertion(item, old_start)
    insert = {"file": file, "after_line": old_start, "content": "".join(line + "\n" for line in new)}
    change = _insert_change(ctx, dict(insert, force=item.get("force")), opened)
    if any(map(_ALNUM_TEXT.search, new)) and _lines_match(_file_lines(opened), old_start, new, False):
        # (sent twice, or git's own diff of a line duplicated: it puts the copy above the line)
        fields = {"hunk": _hunk_number(item), "file": file, "line": old_start}
        change.warnings.append(("w.hunk_maybe_twice", fields))
    return change


def _refuse_a_section_insertion(item, stated):
    """AMBIGUOUS for a hunk without context in a later ---/+++ section of its file when the
    earlier sections add or remove lines above its line: the sections may be meant one after the
    other (`git diff A B; git diff B C`), as git apply reads them, and its line is then another."""
    twin = (item["old_start"], item["tagged"])  # (the same hunk again: _same_insert names it)
    earlier = [hunk for hunk in item.get("earlier") or () if (hunk["old_start"], hunk["tagged"]) != twin]
    if any(_moves_the_place(hunk, stated) for hunk in earlier):
        hunk, file = str(_hunk_number(item)), item["file"]
        raise ToolError(
            "AMBIGUOUS", "patch_sections_insert", "patch_sections.hint", hunk=hunk, file=file, line=stated
        )


def _hunk_splice(opened, first, last, tagged):
    """A hunk applied at lines first..last: its context lines keep their exact bytes (terminator and
    trailing spaces), its `-` lines go, its `+` lines come in the file's encoding and line ending."""
    text = opened.text
    body, eol = text.body, dominant_eol(text.body)
    a, b = line_span(body, first, last)
    old_lines, pos, out = [], a, []
    while pos < b:
        stop = body.find(b"\n", pos, b)
        stop = b if stop < 0 else stop + 1
        old_lines.append(body[pos:stop])
        pos = stop
    index, added = 0, 0
    for sign, line in tagged:
        if sign != "-" and out and not out[-1].endswith(b"\n"):
            out[-1] += eol  # a line now followed by another needs its terminator
        if sign == " ":
            out.append(old_lines[index])
        if sign in (" ", "-"):
            index += 1
        if sign == "+":
            out.append(text.encode(line) + eol)
        added += sign != "-"
    block = b"".join(out)
    if b == len(body) and body and not body.endswith(b"\n"):  # (it reaches the unterminated end)
        kept = next((sign for sign, _line in reversed(tagged) if sign != "-"), None) == " "
        a, block = _unterminated_end(body, a, block, eol, kept)
    fields = {"start": first, "end": last, "removed": last - first + 1, "added": added}
    return Change(text, (a, block, b), first, last, added, fields, at=a)


def _unterminated_end(body, a, block, eol, kept):
    """(a, block) of a hunk that reaches the end of a file without a final line terminator: it
    still has none. The block's last terminator goes, the one it has (a context line kept whole,
    `kept`, may end with CRLF in a file of LF: a lone CR stayed); a hunk that only deletes the
    last lines takes the terminator of the line left last (it gave the file a final newline)."""
    if not block:
        return (_last_line_terminator_cut(body, a) if a > 0 else a), block
    if block.endswith(b"\n"):
        size = 2 if kept and block.endswith(b"\r\n") else len(eol) if block.endswith(eol) else 1
        if block[:-size] and not block[:-size].endswith(b"\n"):
            block = block[:-size]  # the file did not end with a line terminator: it still does not
    return a, block


def _file_lines(opened):
    """The file's lines without terminators (computed once per file)."""
    if opened.lines is None:
        opened.lines = [text for text, _eol in split_decoded(opened.text.decode())]
    return opened.lines


def _lines_match(lines, at, old, loose):
    if at < 0 or at + len(old) > len(lines):
        return False
    if loose:
        return all(lines[at + n].rstrip() == line.rstrip() for n, line in enumerate(old))
    return lines[at : at + len(old)] == old


def _hunk_position(opened, item, lines, sides, stated, removed=()):
    """1-based line where the hunk applies, and warnings (offset, trailing whitespace); `sides`:
    the hunk's (old lines, new lines); `removed`: the indexes in `old` of the hunk's `-` lines."""
    file, old = opened.file, sides[0]
    hunk = str(_hunk_number(item))
    if _lines_match(lines, stated - 1, old, True) and not _lines_match(lines, stated - 1, old, False):
        return stated, [("w.hunk_whitespace", {"hunk": hunk, "file": file})]  # (before a copy elsewhere)
    for loose in (False, True):
        found = _hunk_starts(lines, old, stated, loose)
        if len(found) > 1:
            candidates = _places([(n + 1, n + len(old)) for n in found])
            raise ToolError(
                "AMBIGUOUS",
                "patch_ambiguous",
                data={"candidates": candidates},
                hunk=hunk,
                file=file,
                count=len(found),
                where=", ".join(str(n + 1) for n in found[:20]),
            )
        if found:
            start = found[0] + 1
            warnings = _hunk_placed(opened, item, lines, (sides, removed), stated, start)
            if loose:
                warnings.append(("w.hunk_whitespace", {"hunk": hunk, "file": file}))
            return start, warnings
    _refuse_applied_nowhere(opened, item, lines, sides, stated)
    raise _matched_nowhere(opened, item, lines, old, stated)


def _matched_nowhere(opened, item, lines, old, stated):
    """The MISMATCH of a hunk whose old lines stand nowhere: of one whose lines stand on lines an
    earlier ---/+++ section of its file adds (`git diff A B; git diff B C`), said so."""
    if item.get("earlier") and _on_added_lines(old, item["earlier"]):
        return _hunk_mismatch(
            opened,
            item,
            lines,
            old,
            stated,
            "patch_sections_mismatch",
            guess=False,
            hint="patch_sections.hint",
        )
    return _hunk_mismatch(opened, item, lines, old, stated)


def _refuse_applied_nowhere(opened, item, lines, sides, stated):
    """MISMATCH (patch_applied_nowhere) for a hunk whose old lines stand nowhere and whose new
    lines (a change, with a letter or a digit) stand at its stated place: a patch sent twice. Its block
    most like the old lines was the new text, and following it added the lines once more."""
    old, new = sides
    if new == old or not any(_ALNUM_TEXT.search(line) for line in new):
        return
    if not any(sign == " " for sign, _line in item["tagged"]):
        return  # (-U0: `+    return None` standing anywhere tells nothing)
    for at in dict.fromkeys((stated, item.get("new_start", stated))):  # (elsewhere: another copy)
        if _lines_match(lines, at - 1, new, False):
            raise _hunk_mismatch(
                opened, item, lines, old, stated, "patch_applied_nowhere", guess=False, at=at
            )


def _context_edges(tagged):
    """(context lines above a hunk's first change, context lines below its last)."""
    signs = [sign for sign, _line in tagged]
    above = next((k for k, sign in enumerate(signs) if sign != " "), len(signs))
    below = next((k for k, sign in enumerate(reversed(signs)) if sign != " "), len(signs))
    return above, below


def _refuse_another_place(opened, item, lines, old, stated):
    """AMBIGUOUS for the last hunk of its file, with context above its change and none below (a
    diff gives it none only at the end of the file), whose old lines (one with a letter or a
    digit) stand at its stated line and at the end of the file: a copy of its lines at the stated
    line got the change meant for the file's last lines."""
    above, below = _context_edges(item["tagged"])
    other = len(lines) - len(old)
    if below >= above or item.get("followed") or not any(map(_ALNUM_TEXT.search, old)):
        return  # (hand-written hunks end without context anywhere: a later hunk, or `}` alone, says so)
    if other != stated - 1 and _lines_match(lines, other, old, True):
        raise _other_place(opened, item, old, stated, other)


def _other_place(opened, item, old, stated, other):
    """AMBIGUOUS naming a hunk's stated line and the 0-based line `other` the diff points to."""
    hunk = str(_hunk_number(item))
    candidates = [{"start": n + 1, "end": n + len(old)} for n in (stated - 1, other)]
    return ToolError(
        "AMBIGUOUS", "patch_other_place", data={"candidates": candidates}, hunk=hunk, file=opened.file,
        line=stated, other=other + 1,
    )  # fmt: skip


def _after_moved_hunks(opened, changes):
    """[(index, file, error)] for a patch's hunks that stayed at their stated line in a file where
    another of its hunks was found d lines away: one without context lines (whether it moved too,
    nothing tells), or one whose old lines stand d lines away as well (lines added above both
    since: its stated line may hold another copy). Looked at once every hunk of the file is
    placed, as a later hunk may be the one that moved."""
    moved = [d for d in dict.fromkeys(opened.moved) if d]
    found = []
    for item, change in changes if moved else ():
        error = _stayed_where_moved(opened, item, change, moved)
        if error is not None:
            found.append((item["index"], item["file"], error))
    return found


def _stayed_where_moved(opened, item, change, moved):
    """The AMBIGUOUS of one item of _after_moved_hunks, or None (no hunk, or one that moved)."""
    if "tagged" not in item:
        return None
    old, stated = _hunk_old(item), item["old_start"]
    if change.first != stated + (not old):  # (a hunk without old lines goes after its line)
        return None
    if not old:
        offset = f"{moved[0]:+d}"
        return ToolError(
            "AMBIGUOUS", "patch_insert_moved", hunk=item["hunk"], file=opened.file, line=stated, offset=offset
        )
    lines = _file_lines(opened)
    other = next((stated - 1 + d for d in moved if _lines_match(lines, stated - 1 + d, old, True)), None)
    return None if other is None else _other_place(opened, item, old, stated, other)


def _hunk_old(item):
    """A hunk item's old lines (its context and `-` lines)."""
    return [line for sign, line in item["tagged"] if sign != "+"]


def _hunk_placed(opened, item, lines, hunk, stated, start):
    """The warnings of a hunk found at `start` (its offset), after the refusals of a place it was
    not made for: a patch applied already, a copy of lines changed in place. `hunk`: (its (old,
    new) lines, the indexes of its `-` lines among the old)."""
    sides, removed = hunk
    if start == stated:  # (an append after its context, sent twice; a last line's newline too)
        _refuse_another_place(opened, item, lines, sides[0], stated)
        if not item.get("force"):  # (or one more copy of the lines after it: force says so)
            _refuse_applied(opened, item, lines, sides, stated, start, here=True)
        return []
    opened.moved.append(start - stated)  # (for the file's hunks that stayed: _after_moved_hunks)
    _refuse_applied(opened, item, lines, sides, stated, start)
    if not removed and not item.get("force"):
        _refuse_added_twice(opened, item, lines, sides, start)
    _refuse_a_copy(opened, item, lines, sides[0], stated, start, removed)
    _refuse_a_later_section(opened, item, sides[0], stated, start)
    fields = {"hunk": str(_hunk_number(item)), "file": opened.file, "line": start}
    return [("w.hunk_offset", dict(fields, offset=f"{start - stated:+d}"))]


def _refuse_a_later_section(opened, item, old, stated, start):
    """AMBIGUOUS when a hunk of a later ---/+++ section of its file would move and its old lines
    may stand on lines an earlier section adds (one with a letter or a digit): the sections may
    be meant one after the other (`git diff A B; git diff B C`), and it is those lines it
    changes, unless its stated line, read as a line of the file the earlier sections leave, is
    where its lines are in the file as it is (_in_turn)."""
    earlier = item.get("earlier")
    if earlier and _in_turn(earlier, stated) != start and _on_added_lines(old, earlier):
        hunk, file = str(_hunk_number(item)), opened.file
        raise ToolError("AMBIGUOUS", "patch_sections", hunk=hunk, file=file, line=stated, other=start)


def _on_added_lines(old, earlier):
    """Whether the lines `old` match a run of the new side of one of the `earlier` hunks (edges
    reaching past it too) that holds a line it adds, with a letter or a digit."""
    old = [line.rstrip() for line in old]
    sides = [_new_side(hunk) for hunk in earlier]
    return any(_stands_on_added(side, old, at) for side in sides for at in range(1 - len(old), len(side)))


def _stands_on_added(side, old, at):
    """Whether `old`, put at index `at` of a hunk's new side `side` ([(line, added)]), equals the
    lines it meets there, one of them an added line with a letter or a digit."""
    pairs = [(side[at + k], line) for k, line in enumerate(old) if 0 <= at + k < len(side)]
    if not all(text == line for (text, _added), line in pairs):
        return False
    return any(added and _ALNUM_TEXT.search(text) for (text, added), _line in pairs)


def _new_side(hunk):
    """[(line, whether the hunk adds it)] of a hunk item's new side."""
    return [(line.rstrip(), sign == "+") for sign, line in hunk["tagged"] if sign != "-"]


def _moves_the_place(hunk, line):
    """Whether an earlier section's `hunk` makes "after line `line`" of the file it leaves another
    place than "after line `line`" of the file as it is: it adds or removes lines above that
    place, its new lines reach across it, or it only adds lines right after it (which of the two
    insertions comes first would be a guess)."""
    new, old = len(_new_side(hunk)), sum(sign != "+" for sign, _line in hunk["tagged"])
    start = hunk["new_start"]
    if new == 0:  # (`+N,0`: its lines went from after line N)
        return start < line
    if start + new - 1 <= line:
        return new != old
    return start <= line or (start == line + 1 and old == 0)


def _in_turn(earlier, stated):
    """The line of the file as it is that line `stated` of the file the `earlier` hunks leave
    was, or None when it is a line one of them wrote."""
    shift = 0
    for hunk in sorted(earlier, key=lambda h: h["new_start"]):
        if stated < hunk["new_start"]:
            break
        if stated < hunk["new_start"] + len(_new_side(hunk)):
            return None
        shift += sum((sign == "+") - (sign == "-") for sign, _line in hunk["tagged"])
    return stated - shift


def _refuse_applied(opened, item, lines, sides, stated, start, here=False):
    """MISMATCH when the hunk's new lines already stand at its stated place (by its old or its new
    line number): the patch was applied there, and its old lines at `start` are another copy (a
    patch sent twice changed that copy too). `here`: a hunk that adds lines and matches at its
    stated place, whose whole new side stands there already (an append after its context, or
    after a last line it gives a newline, sent twice, added its lines twice)."""
    old, new = sides
    for at in dict.fromkeys((stated, item.get("new_start", stated))):
        if (len(new) > len(old) if here else bool(new)) and _lines_match(lines, at - 1, new, not here):
            key = "patch_applied_here" if here else "patch_applied"
            raise _hunk_mismatch(opened, item, lines, old, stated, key, guess=False, at=at, other=start)


def _same_alnum(one, two):
    """Whether two lines are one line (trailing whitespace aside) with a letter or a digit."""
    return one.rstrip() == two.rstrip() and bool(_ALNUM_TEXT.search(two))


def _refuse_added_twice(opened, item, lines, sides, start):
    """MISMATCH (patch_applied_here) for a hunk that only adds lines, found at `start`, away from
    its stated place, when its whole new side stands there already, its context lines on the
    lines found: a patch applied, then sent again after lines were added above (a retry), added
    its lines twice."""
    old, new = sides
    before = next(k for k, (sign, _line) in enumerate(item["tagged"]) if sign == " ")  # (+ lines above)
    if _lines_match(lines, start - 1 - before, new, False):
        raise _hunk_mismatch(
            opened, item, lines, old, item["old_start"], "patch_applied_here", guess=False, at=start
        )


def _refuse_a_copy(opened, item, lines, old, stated, start, removed=()):
    """MISMATCH when the hunk's lines were changed at its stated place (_changed_in_place), or one
    of its `-` lines (with a letter or a digit; of a hunk that starts the file, any of its lines)
    still stands there: the same lines at `start` are then a copy the diff was not made for
    (docs/cli.md#patch)."""
    here = lines[max(0, stated - 1) : stated - 1 + len(old)] if stated >= 1 else []
    edge = _changed_in_place(here, old)
    if edge is None:  # (a hunk that starts the file, no context above its change: any line of it tells)
        above, below = _context_edges(item["tagged"])
        tells = range(len(old)) if stated <= 1 and above < below else removed
        edge = next((k for k in tells if k < len(here) and _same_alnum(here[k], old[k])), None)
    if edge is not None:
        raise _hunk_mismatch(
            opened, item, lines, old, stated, "patch_changed_in_place", guess=False,
            text=_show(old[edge].strip()), at=stated + edge, other=start,
        )  # fmt: skip


def _hunk_starts(lines, old, stated, loose):
    """0-based lines where `old` stands (`loose`: trailing whitespace aside): the stated one
    alone when it is there, else every one."""
    if _lines_match(lines, stated - 1, old, loose):
        return [stated - 1]
    key = old[0].rstrip() if loose else old[0]
    found = (n for n, line in enumerate(lines) if (line.rstrip() if loose else line) == key)
    return [n for n in found if _lines_match(lines, n, old, loose)]


def _hunk_mismatch(opened, item, lines, old, stated, key="patch_mismatch", guess=True, hint=None, **fields):
    """MISMATCH with `actual`, the lines at the stated place now, and, with `guess`, the block most
    like the hunk (not when that is a copy the hunk was not made for: _refuse_a_copy)."""
    file = opened.file
    actual = "\n".join(lines[max(0, stated - 1) : stated - 1 + len(old)])
    closest = closest_of(opened, "\n".join(old)) if guess else None
    return ToolError(
        "MISMATCH",
        key,
        hint,
        data={"actual": actual, "found_at": [], "closest": closest},
        hunk=_hunk_number(item),
        file=file,
        line=stated,
        **fields,
    )


# --- argument checking ----------------------------------------------------------------------------

_INT_TEXT = _LazyPattern(  # (as JSON numbers may be: clamped or OUT_OF_RANGE later; "3.0" as 3.0)
    r"\s*([-+]?[0-9]{1,100})(?:\.0*)?\s*"
)


def _as_int(name, value):
    """Integers, integral floats (3.0) and numeric strings ("3") - models send all three (docs/behaviour.md#line-arguments)."""
    if isinstance(value, bool):
        import json

        raise invalid("arg_type", name=name, expected_key="type.integer", got=json.dumps(value))
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    number = _INT_TEXT.fullmatch(value) if isinstance(value, str) else None
    if number:
        return int(number[1])
    raise invalid(
        "arg_type", name=name, expected_key="type.integer", got=_show(value), **_int_hint(name, value)
    )


def _int_hint(name, value):
    """The hint of a line number sent as text that is none ({hint, fields}, or {}): a range in one
    argument (`start: "2-3"`), a word for the end of the file (`after_line: "end"`)."""
    if not isinstance(value, str):
        return {}
    span = (
        re.fullmatch(r"\s*([0-9]+)\s*(?:-|:|,|\.\.)\s*([0-9]+)\s*", value)
        if name in ("start", "end")
        else None
    )
    if span:
        return {"hint": "arg_range.hint", "a": span[1], "b": span[2]}
    if name == "after_line" and value.strip().lower() in _END_WORDS:
        return {"hint": "arg_after_word.hint"}
    return {}


_END_WORDS = ("end", "top", "bottom", "start", "first", "last", "eof", "begin", "beginning")


def _as_bool(name, value):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise invalid("arg_type", name=name, expected_key="type.boolean", got=_show(value))


def _as_target(name, value):
    value = _target_object(value)
    if not isinstance(value, dict) or value.get("kind") not in ("line", "function", "marker", "tag"):
        near = _target_near(value)
        raise invalid("target_bad", "target_near.hint" if near else None, got=_show(value), near=near)
    extra = set(value) - {"kind", "value", "occurrence"}
    if extra or value.get("value") in (None, "") or isinstance(value["value"], (bool, list, dict)):
        raise invalid("target_bad", got=_show(value))  # (["alpha"] was searched as the text ['alpha'])
    target = {"kind": value["kind"], "value": value["value"]}
    if value.get("occurrence") is not None:
        target["occurrence"] = _as_int("occurrence", value["occurrence"])
    return target


_TARGET_KINDS = {
    "function": "func fn fun function def defn method meth class struct sub proc procedure symbol name",
    "line": "line lines ln lineno linenumber l",
    "tag": "tag element elem el node",
    "marker": "marker mark text todo comment",
}
_TARGET_WORDS = {word: kind for kind, words in _TARGET_KINDS.items() for word in words.split()}


def _target_near(value):
    """The target a wrong one likely meant, as KIND:VALUE: a kind spelled as other tools and languages
    do (`func:main`, `method:run`, `element:div`) or misspelled (`functon`), or a bare value (`main`:
    a function, `42`: a line); None when nothing is near."""
    if isinstance(value, str):
        return _bare_target_near(value.strip())
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("kind"), str)
        or value.get("value") in (None, "")
    ):
        return None
    if str(value["value"]).startswith(":"):  # (`Cart::total` without its kind, `fn::main` with 2 colons)
        said = value["kind"].strip()  # (a kind word in lowercase; `Function::getName` names a class)
        kind = _TARGET_WORDS.get(said) if said.islower() else None
        if kind == "function" and _bare_target_near(value["value"][1:]):
            return f"function:{value['value'][1:]}"
        return _bare_target_near(f"{value['kind']}:{value['value']}")
    near = _target_kind_near(value["kind"].strip().lower())
    return f"{near}:{value['value']}" if near else None


def _bare_target_near(bare):
    """The target a value sent without its kind likely meant: a number a line (`42`, `L42`, `#42`),
    a name a function (`main`, `Cart.total`); None for anything else (`3-4`, `-5`, text with
    spaces) and for a kind's word alone (`fn`: no value to name)."""
    number = re.fullmatch(r"[Ll#]?(\d+)", bare)
    if number:
        return f"line:{number[1]}"
    name = r"(?:[^\W\d]|\$)[\w$]*"  # (any letter, `größe` too)
    if not re.fullmatch(rf"{name}(?:(?:\.|::|#){name})*[!?=]?", bare) or _target_kind_near(bare.lower()):
        return None  # (a Ruby name may end in `!`, `?` or `=`: `save!`, `valid?`)
    return f"function:{bare}"


def _target_kind_near(said):
    """The target kind a word other tools use for it (or a misspelling of one) means, or None."""
    import difflib

    close = difflib.get_close_matches(said.rstrip("s"), list(_TARGET_WORDS), n=1, cutoff=0.75)
    return _TARGET_WORDS.get(said) or (_TARGET_WORDS[close[0]] if close else None)


def _target_object(value):
    """A target as sent: a JSON text of an object is decoded, "KIND:VALUE" split; else as it is."""
    value = _json_value(value, ("{",))  # sent as a JSON string
    if isinstance(value, str) and ":" in value:
        kind, _, rest = value.partition(":")
        value = {"kind": kind.strip(), "value": rest}
    return value


def _coerce(param, value):
    if param.type == "integer":
        return _as_int(param.name, value)
    if param.type == "boolean":
        return _as_bool(param.name, value)
    if param.type == "target":
        return _as_target(param.name, value)
    if param.type == "array":
        value = _json_value(value)
        if not isinstance(value, list):
            raise _not_an_array(param.name, value)
        return value
    if not isinstance(value, str):
        raise invalid("arg_type", name=param.name, expected_key="type.string", got=_show(value))
    if param.choices and value not in param.choices:
        raise invalid("arg_choice", name=param.name, choices=", ".join(param.choices), got=_clip(value))
    return value


def _not_an_array(name, value):
    """INVALID_ARGUMENT for a value that is no array; for JSON text of one that does not parse
    (a trailing comma, a missing `]`), the parser's words say where."""
    if isinstance(value, str) and value.strip()[:1] == "[":
        import json

        try:
            json.loads(value)
        except ValueError as exc:
            return invalid("arg_json", name=name, problem=str(exc))
        except RecursionError:
            pass
    return invalid("arg_type", name=name, expected_key="type.array", got=_show(value))


def _arguments_object(args):
    """A call's arguments as a dict: none are {}, a JSON text of an object is decoded (some
    clients double-encode arguments); anything else is INVALID_ARGUMENT."""
    if isinstance(args, str):
        import json

        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            pass
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise invalid("args_not_object", got=type(args).__name__)
    if nesting(args) > MAX_NESTING:
        raise invalid("args_too_deep", limit=MAX_NESTING)
    return args


_MEANT = {  # names other edit tools use for our arguments
    "file": ("path", "file_path", "filepath", "filename", "target_file"),
    "old": ("old_string", "old_str", "old_text", "search", "find", "original"),
    "content": ("new_string", "new_str", "new_text", "new_content", "replacement", "replace", "text", "new"),
    "start": ("start_line", "line", "line_start", "from_line", "line_number"),
    "end": ("end_line", "line_end", "to_line"),
    "after_line": ("insert_line", "insert_after", "after", "line", "line_number", "start", "start_line"),
    "edits": ("changes", "operations"),
    "op": ("type", "action", "operation", "command"),  # (an edit item's)
}


def _refuse_unknown(args, accepted, tool, known=None):
    """INVALID_ARGUMENT naming every argument `tool` does not accept, with the name among `known`
    (default: the accepted ones) each most likely means (`new_string` is `content`), so one retry
    fixes them all."""
    unknown = [name for name in args if name not in accepted]
    if unknown:
        raise _unknown_arguments(unknown, accepted, tool, list(accepted) if known is None else known)


def _unknown_arguments(unknown, accepted, tool, known):
    meant = [(name, _meant_name(name, known)) for name in unknown[:10]]
    meant = [f"{_clip(name)!r} → {near!r}" for name, near in meant if near]
    return invalid(
        "arg_unknown_meant" if meant else "arg_unknown",
        "arg.hint",
        name=", ".join(repr(_clip(name)) for name in unknown[:10])
        + (f" (+{len(unknown) - 10})" if len(unknown) > 10 else ""),
        tool=tool,
        meant=", ".join(meant),
        accepted=", ".join(accepted) or "-",
    )


def _meant_name(name, known):
    """The name of `known` an unknown argument `name` likely means, or None."""
    import difflib

    known = [one for one in known if one != name]  # (a name the item's op does not take: no "start → start")
    if "target" in known and _means_occurrence(name.lower()):
        return "target.occurrence"  # (the CLI's --occurrence stands beside --target)
    near = [ours for ours, theirs in _MEANT.items() if name.lower() in theirs and ours in known]
    near = near or difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.75)
    return near[0] if near else None


def _means_occurrence(said):
    """Whether an argument's name is `occurrence` or a slip of it (`occurence`), not `recurrence`."""
    import difflib

    return said.startswith("oc") and bool(difflib.get_close_matches(said, ["occurrence"], cutoff=0.8))


def validate_args(tool, args):
    """Check `args` against the tool's parameters; returns a new dict without nulls (docs/mcp.md)."""
    args = _arguments_object(args)
    accepted = {p.name: p for p in tool.params}
    _refuse_unknown(args, accepted, tool.name)
    checked = {}
    for name, value in args.items():
        param = accepted[name]
        if non_finite(value):
            raise invalid("arg_type", name=name, expected_key="type.finite", got=_show(value))
        if value is not None:
            checked[name] = _coerce(param, value)
    for param in tool.params:
        if param.required and param.name not in checked:
            raise invalid("arg_missing", name=param.name, tool=tool.name)
    return checked


# --- tool descriptions, argument help and CLI examples (the words of the tool table) -----------

# Tool descriptions (d.*), argument help (p.*), CLI examples (x.*) and global options (g.*).
MESSAGES.update(
    {
        "d.read": (
            "Read lines of a text file, numbered N<TAB>text, with a viewed_code_id that later edits pass to "
            "prove they are based on this view. Ranges: start/end (negative end counts from the end, end 0 = "
            "the enclosing function) or a target.",
            "读取文本文件的行（格式 N<TAB>文本），并返回 viewed_code_id，之后的编辑可传入它以证明基于此视图。"
            "范围：start/end（负数 end 从末尾倒数，end 为 0 表示所在函数）或 target。",
        ),
        "d.replace": (
            "Replace lines start..end with content, optionally checking that they still hold old; or, without "
            "start, replace the one place where old occurs (AMBIGUOUS when several). Untouched lines keep "
            "their exact bytes; returns a diff.",
            "用 content 替换第 start..end 行，可用 old 校验原内容；不给 start 时，替换 old 唯一出现的位置"
            "（多处出现则返回 AMBIGUOUS）。未改动的行字节不变；返回差异。",
        ),
        "d.insert": (
            "Insert content after line after_line (0 = at the top, -1 = at the end). Returns a diff.",
            "在第 after_line 行之后插入 content（0 为开头，-1 为末尾）。返回差异。",
        ),
        "d.delete": (
            "Delete lines start..end or a target. The deleted text is kept as a chip; a range with unbalanced "
            "brackets is refused unless force.",
            "删除第 start..end 行或 target。被删除的文本保存为 chip；括号不配对的范围会被拒绝，除非 force。",
        ),
        "d.write": (
            "Write a whole file (create it with its parents, or overwrite keeping encoding, BOM, line endings "
            "and permissions).",
            "写入整个文件（新建时自动创建父目录；覆盖时保留编码、BOM、换行符和权限）。",
        ),
        "d.balance": (
            "Check brackets, quotes and tags; lists what is unmatched with line and column.",
            "检查括号、引号和标签是否配对；列出不配对项的行号和列号。",
        ),
        "d.func-range": (
            "The lines of the function, method or class enclosing a line (signature, decorators and doc "
            "comment included).",
            "给出包含某行的函数、方法或类的行范围（含签名、装饰器和文档注释）。",
        ),
        "d.tag-range": (
            "The lines of the markup element enclosing a line (HTML, XML, Vue, Svelte).",
            "给出包含某行的标记元素的行范围（HTML、XML、Vue、Svelte）。",
        ),
        "d.insert-chip": (
            "Recover saved content. No from: list chips. from only: show one. from + to: insert it after "
            "a line (what: see as).",
            "恢复保存的内容。不给 from：列出 chip；只给 from：查看一个；给 from 和 to：插入到某行之后（插入什么：见 as）。",
        ),
        "d.trx-status": (
            "List the snapshots of recent edits, newest first (metadata only).",
            "列出最近编辑的快照，最新的在前（仅元数据）。",
        ),
        "d.trx-commit": (
            "Forget snapshots (all, or the events that touched one file, whole): the edits can no longer be rolled back.",
            "丢弃快照（全部，或涉及某个文件的整个事件）：之后这些编辑无法回滚。",
        ),
        "d.trx-rollback": (
            "Undo edits: the last steps, or down to an event_id, for all files or one. Refuses with CONFLICT, "
            "rolling back nothing, when a file changed since.",
            "撤销编辑：最近 steps 次，或直到某个 event_id，可限定文件。若文件之后又被修改，则返回 CONFLICT 且不回滚任何内容。",
        ),
        "d.edit": (
            "Several edits as one atomic change: `edits`, items {{op, file, ...}} taking the arguments of replace, "
            "insert, delete or write, or `patch`, a unified diff. Line numbers are those before the call; nothing "
            "is written unless every item passes (`failed` lists each failing item). One event for rollback.",
            "多处编辑作为一次原子修改：`edits` 为条目数组 {{op, file, ...}}（op 为 replace、insert、delete 或 write，"
            "参数同对应工具；省略时自动推断），或 `patch` 为统一格式 diff。行号均指调用前的文件；先检查全部条目，"
            "全部通过才写入（否则 `failed` 列出每个失败条目）。整个调用是一个可回滚事件。",
        ),
        "d.edit.cli": (
            "Several edits as one atomic change: a JSON array of items {{op, file, ...}} (--edits-file) taking "
            "the arguments of replace, insert, delete or write. Line numbers are those before the call; nothing "
            "is written unless every item passes (`failed` lists each failing item). One event for rollback.",
            "多处编辑作为一次原子修改：JSON 条目数组 {{op, file, ...}}（--edits-file），参数同 replace、insert、delete 或 write；"
            "行号均指调用前的文件；全部条目通过才写入（否则 `failed` 列出每个失败条目）。整个调用是一个可回滚事件。",
        ),
        "d.patch": (
            "Apply a unified diff (git diff, diff -u) to the files it names, all hunks or none.",
            "应用统一格式 diff（git diff、diff -u）到其中的文件，全部块都成功才写入。",
        ),
        "x.edit": (
            "example:\n  better-edit-tools edit --edits-file edits.json --preview\n"
            '  echo \'[{{"file": "a.py", "start": 3, "content": "x = 1"}}]\' | better-edit-tools edit --edits-file -',
            "示例：\n  better-edit-tools edit --edits-file edits.json --preview\n"
            '  echo \'[{{"file": "a.py", "start": 3, "content": "x = 1"}}]\' | better-edit-tools edit --edits-file -',
        ),
        "x.patch": (
            "example:\n  git diff | better-edit-tools patch --preview\n  better-edit-tools patch fix.diff",
            "示例：\n  git diff | better-edit-tools patch --preview\n  better-edit-tools patch fix.diff",
        ),
        "p.edits": (
            "array of edit items {{op, file, ...}}; coordinates of the files before the call",
            "编辑条目数组 {{op, file, ...}}；坐标均指调用前的文件",
        ),
        "p.patch": ("a unified diff (instead of edits)", "统一格式 diff（代替 edits）"),
        "p.edits_file": (
            "read the JSON array of items from a file, - = stdin",
            "从文件读取条目 JSON 数组，- 表示标准输入",
        ),
        "p.patch_file": (
            "read the diff from a file, - = stdin (the default)",
            "从文件读取 diff，- 表示标准输入（默认）",
        ),
        "p.unsafe_paths": (
            "let the patch name files outside the current folder (absolute, or through ..)",
            "允许补丁指向当前文件夹之外的文件（绝对路径或经由 ..）",
        ),
        "p.edit_force": (
            "apply despite a placeholder line in content, an old that starts or ends inside a word, a delete "
            "item whose brackets do not balance, or lines a patch adds that may stand there already",
            "即使内容中有占位行、old 在词中间开始或结束、删除条目的括号不配对，或补丁要添加的行可能已在该处，也执行",
        ),
        "p.edit_force.cli": (
            "apply despite a placeholder line in content, an old that starts or ends inside a word, or a "
            "delete item whose brackets do not balance",
            "即使内容中有占位行、old 在词中间开始或结束，或删除条目的括号不配对，也执行",
        ),
        "p.patch_force": (
            "apply despite a placeholder line among the added lines, or add lines that may stand there "
            "already (a patch applied before)",
            "即使添加的行中有占位行，或要添加的行可能已在该处（补丁已应用过），也执行",
        ),
        "p.version": ("show the version and exit", "显示版本并退出"),
        "p.default": ("default {value}", "默认 {value}"),
        "p.op": (
            "inferred when omitted: insert with after_line, replace with content, else delete",
            "省略时推断：有 after_line 为 insert，有 content 为 replace，否则 delete",
        ),
        "s.file": ("path, relative to the root", "路径，相对根目录"),
        "s.start": ("first line, 1-based", "起始行，从 1 开始"),
        "s.end": ("last line, inclusive (default start)", "结束行，含（默认 start）"),
        "s.target": (
            "instead of start/end: {{kind: line|function|marker|tag, value, occurrence}} or KIND:VALUE",
            "代替 start/end：{{kind: line|function|marker|tag, value, occurrence}} 或 KIND:VALUE",
        ),
        "s.content": ('new text ("" = no lines)', '新文本（"" 表示零行）'),
        "s.viewed_code_id": ("from the read of these lines", "读取这些行时得到的 id"),
        "s.force": ("write despite a placeholder line", "即使有占位行也写入"),
        "s.encoding": ("e.g. gbk (non-UTF files)", "如 gbk（非 UTF 文件）"),
        "d.workflow": (
            " Workflow: {read} the lines, then pass its viewed_code_id here.",
            "流程：先用 {read} 读取这些行，再把得到的 viewed_code_id 传给这里。",
        ),
        "p.file": (
            "the file (relative to the root, or absolute, or file:// URL)",
            "文件（相对根目录、绝对路径或 file:// URL）",
        ),
        "p.encoding": (
            "the file's encoding when it is not UTF-8/UTF-16 with BOM, e.g. gbk, cp1252",
            "文件编码（非 UTF-8/带 BOM 的 UTF-16 时），如 gbk、cp1252",
        ),
        "p.brief": ("omit content, diff and balance from the result", "结果中省略 content、diff 和 balance"),
        "p.preview": ("compute everything, write nothing", "只计算，不写入"),
        "p.format": ("diff format: unified or plain", "差异格式：unified 或 plain"),
        "p.viewed_code_id": (
            "the viewed_code_id read returned for these lines",
            "read 返回的 viewed_code_id",
        ),
        "p.start": ("first line (1-based)", "起始行（从 1 开始）"),
        "p.end": (
            "last line (inclusive; default start; negative counts from the end)",
            "结束行（含；默认等于 start；负数从末尾倒数）",
        ),
        "p.read_end": (
            "last line (default: the last; negative counts from the end; 0 = the enclosing function)",
            "结束行（默认最后一行；负数从末尾倒数；0 表示所在函数）",
        ),
        "p.target": (
            "what to address instead of lines: {{kind: line|function|marker|tag, value, occurrence}}; CLI KIND:VALUE",
            "用目标代替行号：{{kind: line|function|marker|tag, value, occurrence}}；命令行写作 KIND:VALUE",
        ),
        "p.target.cli": (
            "what to address instead of lines, as KIND:VALUE, KIND one of line, function, marker, tag "
            "(--occurrence picks among several)",
            "用目标代替行号，写作 KIND:VALUE，KIND 为 line、function、marker 或 tag（多个时用 --occurrence 选择）",
        ),
        "p.content": ('the new text ("" = no lines)', '新文本（"" 表示零行）'),
        "p.insert_content": (
            'the lines to insert, not empty ("\\n" is one empty line)',
            '要插入的行，不能为空（"\\n" 表示一个空行）',
        ),
        "p.line": ("a line inside the block (1-based)", "块内的某一行（从 1 开始）"),
        "p.max_lines": ("at most this many lines (0 = no limit)", "最多返回的行数（0 不限）"),
        "p.old": (
            "the text expected at start..end, or (without start) the text to find and replace",
            "start..end 处应有的原文；不给 start 时为要查找并替换的文本",
        ),
        "p.after_line": ("insert after this line: 0 = top, -1 = end", "插入到此行之后：0 为开头，-1 为末尾"),
        "p.force": ("delete even if the range's brackets do not balance", "即使范围内括号不配对也删除"),
        "p.force_placeholder": (
            "write content even if a line looks like a placeholder for kept code, or it looks wrapped "
            "(a Markdown fence, a read's line numbers, a diff's signs) (replace: or old starts or ends "
            "inside a word, or content's lines are relative to old)",
            "即使内容中有像“省略原有代码”的占位行、或看起来被包裹（Markdown 围栏、读取的行号、diff 符号）也写入"
            "（replace：或 old 在词中间开始或结束，或 content 的行相对于 old 缩进）",
        ),
        "p.verbose": ("also list the matched pairs", "同时列出已配对的符号"),
        "p.outer": ("give the outermost top-level block instead", "改为给出最外层的顶级块"),
        "p.from": ("chip://ID or file:///path", "chip://ID 或 file:///path"),
        "p.to": (
            "path:LINE or file:///path:LINE - insert after LINE",
            "path:LINE 或 file:///path:LINE，插入到 LINE 之后",
        ),
        "p.as": (
            "text (the chip's text) or annotated (its arguments as a comment)",
            "text（chip 文本）或 annotated（参数注释）",
        ),
        "p.filter": (
            "list only chips whose tool, error or content contains this",
            "只列出工具名、错误或内容包含此文本的 chip",
        ),
        "p.trx_file": ("only the events that touched this file", "只处理涉及此文件的事件"),
        "p.steps": ("how many edits to undo (default 1)", "撤销的编辑次数（默认 1）"),
        "p.event_id": ("undo down to and including this event", "撤销到此事件（含）为止"),
        "p.rollback_force": (
            "roll back even when a file changed since the snapshot",
            "即使文件在快照后被修改也回滚",
        ),
        "p.occurrence": (
            "with --target: which match (1-based) of a marker, function or tag",
            "配合 --target：标记、函数或标签的第几处匹配（从 1 开始）",
        ),
        "p.content_file": ("read the content from a file, - = stdin", "从文件读取内容，- 表示标准输入"),
        "p.old_file": ("read old from a file, - = stdin", "从文件读取 old，- 表示标准输入"),
        "p.output": ("text (default) or json", "text（默认）或 json"),
        "g.lang": ("language of messages: en or zh", "消息语言：en 或 zh"),
        "g.no_prefix": ("MCP: list tools without the be- prefix", "MCP：工具名不带 be- 前缀"),
        "g.underscore": ("MCP: list tool names with _ instead of -", "MCP：工具名用 _ 代替 -"),
        "g.root": ("confine every path to this directory", "把所有路径限制在此目录内"),
        "g.max_chips": ("how many chips to keep (default 30)", "保留的 chip 数量（默认 30）"),
        "x.read": (
            "example:\n  better-edit-tools read app.py -s 10 -e 30\n  better-edit-tools read -f app.py -s 42 -e auto -o json",
            "示例：\n  better-edit-tools read app.py -s 10 -e 30\n  better-edit-tools read -f app.py -s 42 -e auto -o json",
        ),
        "x.replace": (
            "example:\n  better-edit-tools replace -f app.py -s 12 -e 13 -c 'x = 2'\n"
            "  better-edit-tools replace -f app.py -s 12 --old 'x = 1' -c 'x = 2'\n"
            "  printf 'new\\n' | better-edit-tools replace -f app.py --old 'old line' --content-file -",
            "示例：\n  better-edit-tools replace -f app.py -s 12 -e 13 -c 'x = 2'\n"
            "  better-edit-tools replace -f app.py -s 12 --old 'x = 1' -c 'x = 2'\n"
            "  printf 'new\\n' | better-edit-tools replace -f app.py --old 'old line' --content-file -",
        ),
        "x.insert": (
            "example:\n  better-edit-tools insert -f app.py --after-line 0 -c '#!/usr/bin/env python3'",
            "示例：\n  better-edit-tools insert -f app.py --after-line 0 -c '#!/usr/bin/env python3'",
        ),
        "x.delete": (
            "example:\n  better-edit-tools delete -f app.py -s 20 -e 25\n  better-edit-tools delete -f app.py --target function:old_helper",
            "示例：\n  better-edit-tools delete -f app.py -s 20 -e 25\n  better-edit-tools delete -f app.py --target function:old_helper",
        ),
        "x.write": (
            "example:\n  better-edit-tools write -f notes/todo.md -c '# TODO'\n  cat draft.txt | better-edit-tools write -f out.txt --content-file -",
            "示例：\n  better-edit-tools write -f notes/todo.md -c '# TODO'\n  cat draft.txt | better-edit-tools write -f out.txt --content-file -",
        ),
        "x.balance": (
            "example:\n  better-edit-tools balance -f app.js -v",
            "示例：\n  better-edit-tools balance -f app.js -v",
        ),
        "x.func-range": (
            "example:\n  better-edit-tools func-range -f app.py -l 42 --outer",
            "示例：\n  better-edit-tools func-range -f app.py -l 42 --outer",
        ),
        "x.tag-range": (
            "example:\n  better-edit-tools tag-range -f index.html -l 17",
            "示例：\n  better-edit-tools tag-range -f index.html -l 17",
        ),
    }
)


# --- the tool table -------------------------------------------------------------------------------


class Param:
    """One argument: its JSON type, help text key, CLI flags and the CLI's extras.

    CLI extras (data the CLI section reads; nothing there names a tool): `cli_default` replaces
    `default` on the command line; `cli_words` maps words to values (`--end auto` -> 0); `cli_also`
    are more options that fill this argument: ("file", flag, help key) reads it from a file or stdin,
    ("occurrence", flag, help key) adds `occurrence` to a target.
    """

    __slots__ = (
        "name", "type", "help", "required", "flags", "choices", "default", "metavar", "cli_default",
        "cli_words", "cli_also", "shared", "cli_required",
    )  # fmt: skip

    def __init__(
        self, name, type, help, required=False, flags=(), choices=None, default=None, metavar=None,
        cli_default=None, cli_words=None, cli_also=(), shared=False, cli_required=False,
    ):  # fmt: skip
        self.name, self.type, self.help, self.required = name, type, help, required
        self.flags, self.choices, self.default, self.metavar = flags, choices, default, metavar
        self.cli_default, self.cli_words, self.cli_also = cli_default, cli_words or {}, cli_also
        self.shared = shared  # described once in the server's instructions, not in every tool
        self.cli_required = cli_required  # (its cli_also option: the command's only input)

    def schema(self, lang, full=False):
        """The JSON schema of this argument: one `type` each (alternatives as `anyOf`, which strict
        validators take), a one-line description, and the default said in it too (some hosts drop
        `default`). The compact form leaves the description of a shared argument short."""
        if self.type == "target":
            schema = dict(_TARGET_SCHEMA)
        elif self.type == "array":
            schema = {"type": "array", "items": _edit_item_schema(lang)}
        elif self.choices:
            schema = {"enum": list(self.choices)}
        else:
            schema = {"type": self.type}
        key = self.help if full or not self.shared else "s." + self.name
        words = tr(lang, key) if key in MESSAGES else ""  # (preview, brief: said in the instructions)
        if self.default is not None:
            schema["default"] = self.default
            if str(self.default) not in words:
                words = "; ".join(filter(None, (words, tr(lang, "p.default", value=self.default))))
        if words:
            schema["description"] = words
        return schema


_TARGET_SCHEMA = {
    "anyOf": [{"type": "object"}, {"type": "string"}]
}  # {kind, value, occurrence} or KIND:VALUE


def _edit_item_schema(lang):
    """One be-edit item: an edit tool's arguments and its `op` (docs/mcp.md)."""
    properties = {"op": {"enum": list(_EDIT_OPS), "description": tr(lang, "p.op")}}
    properties.update((name, {"type": kind}) for name, kind in _ITEM_TYPES.items())
    properties["target"] = _TARGET_SCHEMA
    return {"type": "object", "properties": properties, "required": ["file"], "additionalProperties": False}


class Tool:
    """One tool: MCP name (without prefix), CLI command or None, handler, parameters, hints."""

    __slots__ = (
        "name", "cli", "handler", "params", "title", "read_only", "destructive", "idempotent", "output",
        "statuses", "cli_summary", "mcp",
    )  # fmt: skip

    def __init__(
        self, name, handler, params, title, output, cli=True, read_only=False, destructive=False,
        idempotent=False, statuses=("ok",), cli_summary=("cli.generic_summary", None), mcp=True,
    ):  # fmt: skip
        self.name, self.handler, self.params, self.title = name, handler, params, title
        self.statuses = statuses  # the success values of `status`; "error" is added for error results
        # the CLI's one-line summary: (message key, verb key[, verb key when the file was created])
        self.cli_summary = cli_summary
        self.mcp = mcp  # False: a CLI form of another tool (patch is be-edit's `patch` argument)
        self.cli = name if cli else None
        self.read_only, self.destructive, self.idempotent = read_only, destructive, idempotent
        self.output = output

    def input_schema(self, lang, full=False):
        return {
            "type": "object",
            "properties": {p.name: p.schema(lang, full) for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def output_schema(self, full=False):
        """What structuredContent holds: `status` (the success values, or "error" with `error`:
        clients validate structuredContent even when isError is true, docs/mcp.md). tools/list
        sends this short form (its size counts against a model's context); `full` adds every
        success member, for docs/mcp.md and the tests."""
        properties = {
            "status": {"enum": [*self.statuses, "error"]},
            "error": {"type": "object"},
        }
        if full:
            properties.update(
                (name, {"anyOf": [{"type": k} for k in kind]} if isinstance(kind, list) else {"type": kind})
                for name, kind in self.output.items()
                if name != "status"
            )
            properties["warnings"] = {"type": "array", "items": {"type": "string"}}
            properties["error"] = {
                "type": "object",
                "properties": {
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                    "hint": {"type": "string"},
                },
                "required": ["code", "message", "hint"],
            }
        return {"type": "object", "properties": properties, "required": ["status"]}

    def annotations(self):
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": False,
        }


P_FILE = Param("file", "string", "p.file", True, ("--file", "-f"), metavar="PATH", shared=True)
P_ENCODING = Param("encoding", "string", "p.encoding", flags=("--encoding",), metavar="NAME", shared=True)
P_BRIEF = Param("brief", "boolean", "p.brief", flags=("--brief",), shared=True)
P_PREVIEW = Param("preview", "boolean", "p.preview", flags=("--preview",), shared=True)
P_FORMAT = Param(
    "format", "string", "p.format", flags=("--format",), choices=("unified", "plain"), default="unified",
    shared=True,
)  # fmt: skip
P_VIEW = Param(
    "viewed_code_id", "string", "p.viewed_code_id", flags=("--viewed-code-id",), metavar="ID", shared=True
)
P_START = Param("start", "integer", "p.start", flags=("--start", "-s"), metavar="N", shared=True)
P_END = Param("end", "integer", "p.end", flags=("--end", "-e"), metavar="N", shared=True)
P_TARGET = Param(
    "target", "target", "p.target", flags=("--target",), metavar="KIND:VALUE",
    cli_also=(("occurrence", "--occurrence", "p.occurrence"),), shared=True,
)  # fmt: skip
P_CONTENT = Param(
    "content", "string", "p.content", True, ("--content", "-c"), metavar="TEXT",
    cli_also=(("file", "--content-file", "p.content_file"),), shared=True,
)  # fmt: skip
P_INSERT_CONTENT = Param(  # (not shared: for insert, "" is no edit at all)
    "content", "string", "p.insert_content", True, ("--content", "-c"), metavar="TEXT",
    cli_also=(("file", "--content-file", "p.content_file"),),
)  # fmt: skip
P_LINE = Param("line", "integer", "p.line", True, ("--line", "-l"), metavar="N")
P_FILE_OPT = Param("file", "string", "p.trx_file", metavar="PATH")
P_FORCE = Param("force", "boolean", "p.force_placeholder", flags=("--force",), shared=True)

_MANY_OUT = {
    "status": "string", "changed": "boolean", "event_id": "string", "files": "array",
    "items": "array", "preview": "boolean",
}  # fmt: skip

_EDIT_OUT = {
    "status": "string", "file": "string", "path": "string", "start": "integer", "end": "integer",
    "changed": "boolean", "viewed_code_id": "string", "relocated": "integer",
    "removed": "integer", "added": "integer", "after_line": "integer", "total": "integer",
    "diff": "string", "balance": "string", "event_id": "string", "chip": "string",
    "preview": "boolean", "from": "string",
}  # fmt: skip

# fmt: off
TOOLS = [
    Tool(
        "read", tool_read,
        [
            P_FILE, P_START,
            Param(
                "end", "integer", "p.read_end", flags=("--end", "-e"), metavar="N|auto", cli_words={"auto": 0}
            ),
            P_TARGET, P_BRIEF, P_ENCODING,
            Param(
                "max_lines", "integer", "p.max_lines", flags=("--max-lines",), default=READ_MAX_LINES,
                metavar="N", cli_default=0,
            ),
        ],
        "Read lines",
        {
            "status": "string", "file": "string", "path": "string", "start": "integer", "end": "integer",
            "total": "integer", "content": "string", "eol": "string", "encoding": "string",
            "viewed_code_id": "string", "truncated": "boolean", "next_start": "integer",
        },
        read_only=True, idempotent=True, cli_summary=("cli.read_summary", None),
    ),  # fmt: skip
    Tool(
        "replace", tool_replace,
        [
            P_FILE, P_CONTENT, P_START, P_END,
            Param(
                "old", "string", "p.old", flags=("--old",), metavar="TEXT",
                cli_also=(("file", "--old-file", "p.old_file"),),
            ),
            P_TARGET, P_VIEW, P_FORCE, P_PREVIEW, P_BRIEF, P_FORMAT, P_ENCODING,
        ],
        "Replace lines", _EDIT_OUT, destructive=True, cli_summary=("cli.edit_summary", "cli.verb.replace"),
    ),  # fmt: skip
    Tool(
        "insert", tool_insert,
        [
            P_FILE,
            Param("after_line", "integer", "p.after_line", True, ("--after-line", "--after"), metavar="N"),
            P_INSERT_CONTENT, P_VIEW, P_FORCE, P_PREVIEW, P_BRIEF, P_FORMAT, P_ENCODING,
        ],
        "Insert lines", _EDIT_OUT, cli_summary=("cli.insert_summary", "cli.verb.insert"),
    ),  # fmt: skip
    Tool(
        "delete", tool_delete,
        [
            P_FILE, P_START, P_END, P_TARGET, P_VIEW,
            Param("force", "boolean", "p.force", flags=("--force",)),
            P_PREVIEW, P_BRIEF, P_FORMAT, P_ENCODING,
        ],
        "Delete lines", _EDIT_OUT, destructive=True, cli_summary=("cli.edit_summary", "cli.verb.delete"),
    ),  # fmt: skip
    Tool(
        "write", tool_write, [P_FILE, P_CONTENT, P_FORCE, P_PREVIEW, P_BRIEF, P_ENCODING],
        "Write a whole file",
        {
            "status": "string", "file": "string", "path": "string", "created": "boolean",
            "changed": "boolean", "lines": "integer", "bytes": "integer", "event_id": "string",
            "diff": "string", "preview": "boolean",
        },
        destructive=True, cli_summary=("cli.write_summary", "cli.verb.write", "cli.verb.write_new"),
    ),  # fmt: skip
    Tool(
        "balance", tool_balance,
        [P_FILE, Param("verbose", "boolean", "p.verbose", flags=("--verbose", "-v")), P_ENCODING],
        "Check brackets and tags",
        {
            "status": "string", "file": "string", "path": "string", "language": ["string", "null"],
            "unmatched": "array", "counts": "object", "pairs": "array", "reason": "string",
        },
        read_only=True, idempotent=True, statuses=("balanced", "unbalanced", "not_checked"),
        cli_summary=("cli.balance_summary", None),
    ),  # fmt: skip
    Tool(
        "func-range", tool_func_range,
        [P_FILE, P_LINE, Param("outer", "boolean", "p.outer", flags=("--outer",)), P_ENCODING],
        "Find the enclosing function",
        {
            "status": "string", "file": "string", "path": "string", "start": "integer", "end": "integer",
            "kind": "string", "name": "string", "language": "string",
        },
        read_only=True, idempotent=True, cli_summary=("cli.range_summary", None),
    ),  # fmt: skip
    Tool(
        "tag-range", tool_tag_range, [P_FILE, P_LINE, P_ENCODING], "Find the enclosing element",
        {
            "status": "string", "file": "string", "path": "string", "start": "integer", "end": "integer",
            "tag": "string", "language": "string",
        },
        read_only=True, idempotent=True, cli_summary=("cli.range_summary", None),
    ),  # fmt: skip
    Tool(
        "insert-chip", tool_insert_chip,
        [
            Param("from", "string", "p.from", metavar="SOURCE"),
            Param("to", "string", "p.to", metavar="PATH:LINE"),
            Param("as", "string", "p.as", choices=("text", "annotated"), default="text"),
            Param("filter", "string", "p.filter"), P_VIEW, P_PREVIEW,
        ],
        "Recover saved content",
        dict(
            _EDIT_OUT, chips="array", items="array", id=["string", "null"], tool="string",
            args=["object", "null"], err_msg=["string", "null"], created_at=["number", "null"],
            text=["string", "null"],
        ),
        cli=False,
    ),  # fmt: skip
    Tool(
        "trx-status", tool_trx_status, [], "List snapshots", {"status": "string", "snapshots": "array"},
        cli=False, read_only=True, idempotent=True,
    ),  # fmt: skip
    Tool(
        "trx-commit", tool_trx_commit, [P_FILE_OPT], "Forget snapshots",
        {"status": "string", "committed": "integer"}, cli=False, idempotent=True,
    ),  # fmt: skip
    Tool(
        "trx-rollback", tool_trx_rollback,
        [
            Param("steps", "integer", "p.steps", default=1), Param("event_id", "string", "p.event_id"),
            P_FILE_OPT, Param("force", "boolean", "p.rollback_force"),
        ],
        "Undo edits", {"status": "string", "rolled_back": "array", "files": "array", "event_id": "string"},
        cli=False, destructive=True,
    ),  # fmt: skip
    Tool(
        "edit", tool_edit,
        [
            Param(
                "edits", "array", "p.edits", cli_also=(("file", "--edits-file", "p.edits_file"),),
                cli_required=True,
            ),  # fmt: skip
            Param("patch", "string", "p.patch"),
            Param("force", "boolean", "p.edit_force", flags=("--force",)),
            P_ENCODING, P_PREVIEW, P_BRIEF, P_FORMAT,
        ],
        "Edit several places at once", _MANY_OUT, destructive=True,
        cli_summary=("cli.items_summary", "cli.verb.edit"),
    ),
    Tool(
        "patch", tool_edit,
        [
            Param("patch", "string", "p.patch", cli_also=(("file", "--patch-file", "p.patch_file", "-"),)),
            Param("force", "boolean", "p.patch_force", flags=("--force",)),
            Param("unsafe_paths", "boolean", "p.unsafe_paths", flags=("--unsafe-paths",)),
            P_ENCODING, P_PREVIEW, P_BRIEF, P_FORMAT,
        ],
        "Apply a unified diff", _MANY_OUT, destructive=True,
        mcp=False,  # the MCP form is be-edit's `patch` argument
        cli_summary=("cli.items_summary", "cli.verb.patch"),
    ),
]
# fmt: on
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS if tool.mcp}
_VIEWED_EDITS = ("replace", "insert", "delete", "edit")  # their descriptions say read -> viewed_code_id


def find_tool(name):
    """The tool for any spelling: be-read, be_read, read, BE-READ ... (docs/mcp.md)."""
    if not isinstance(name, str):
        return None
    key = name.strip().lower().replace("_", "-")
    if key.startswith("be-"):
        key = key[3:]
    return TOOLS_BY_NAME.get(key)


def public_name(tool, prefix=True, underscore=False):
    name = ("be-" + tool.name) if prefix else tool.name
    return name.replace("-", "_") if underscore else name


def tool_names(prefix=True, underscore=False):
    """{trx_rollback: "be-trx-rollback", ...}: each tool's name as listed, keyed for message fields."""
    return {t.name.replace("-", "_"): public_name(t, prefix, underscore) for t in TOOLS if t.mcp}


def call_tool(ctx, tool, args):
    """Validate and run one tool; the single path both the server and the CLI take. A commit that
    a killed process left half done is undone first, and the result says so."""
    if not tool.read_only:
        _guard_signals()  # (a signal while a writing call plans: die quietly, nothing written yet)
    undone = _recover(ctx, tool)
    try:
        result = _run_handler(ctx, tool, args)
    except ToolError as exc:
        undone, ctx.recovered = undone + ctx.recovered, []
        if undone:
            exc.data["warnings"] = _local_warnings(ctx, undone) + list(exc.data.get("warnings") or [])
        raise
    finally:
        _LINE_INDEX.clear()  # no file's bytes outlive the call that read them
    undone, ctx.recovered = undone + ctx.recovered, []  # (and what Locks undid meanwhile)
    if undone:
        result["warnings"] = _local_warnings(ctx, undone) + result.get("warnings", [])
    if ctx.mcp:
        _cut_diff_lines(ctx, result)
    return result


def _validated(tool, args):
    """validate_args() of a call of `tool`: its errors name the tool as listed (be-read, be_read),
    where those of an edit's item name the item's op as it is."""
    try:
        return validate_args(tool, args)
    except ToolError as exc:
        if "tool" in exc.fields:  # (`arg_missing`, `arg_unknown`: "... for {tool}")
            exc.fields["listed"] = True
        raise


def _run_handler(ctx, tool, args):
    """The tool's result; running out of descriptors at any step of it is IO (ulimit -n)."""
    try:
        return tool.handler(ctx, _validated(tool, args))
    except OSError as exc:
        if not _out_of_descriptors(exc):
            raise
        where = exc.filename or (args.get("file") if isinstance(args, dict) else None) or ctx.cwd
        raise os_error(exc, str(where)) from None


def _cut_diff_lines(ctx, result):
    """The server's diffs show DIFF_LINE_CHARS characters of a longer line, with a warning: an edit
    beside one line of megabytes (a minified file) sent that line back twice in its context."""
    cut, long = 0, []
    for entry in (result, *(result.get("files") or ())):
        diff = entry.get("diff") if isinstance(entry, dict) else None  # (some results list names)
        if isinstance(diff, str) and len(diff) > DIFF_LINE_CHARS:
            entry["diff"], lines_cut = _diff_head(diff.split("\n"), long, entry.get("file"))
            cut += lines_cut
    warnings = [tr(ctx.lang, "w.diff_cut", count=cut, chars=DIFF_LINE_CHARS)] if cut else []
    warnings += [
        tr(ctx.lang, "w.diff_long", file=file, shown=shown, lines=total) for file, shown, total in long
    ]
    if warnings:
        result["warnings"] = [*result.get("warnings", []), *warnings]


def _diff_head(lines, long, file):
    """(a diff's `lines` joined, each cut to DIFF_LINE_CHARS characters, and the first
    READ_MAX_CHARS characters of them at a line's end, the number of lines cut): a delete of
    100,000 lines sent 3 MB back for a 78-byte call. A diff cut short appends (lines shown,
    lines) to `long`, with the file's name."""
    diff = "\n".join(line[:DIFF_LINE_CHARS] for line in lines)
    cut = sum(len(line) > DIFF_LINE_CHARS for line in lines)
    if len(diff) <= READ_MAX_CHARS:
        return diff, cut
    head = diff[: diff.rfind("\n", 0, READ_MAX_CHARS) + 1]
    long.append((file, head.count("\n"), len(lines)))
    return head, cut


def _journal_may_hold(ctx):
    """Whether a workspace's journal may hold a record, found without importing platformdirs
    (user_cache_base()) on POSIX systems. On Windows: True (the full look costs the import)."""
    if os.name != "posix":
        return True
    base = os.path.join(user_cache_base(), "journal")
    return any(_listdir(os.path.join(base, name)) for name in _listdir(base))


def _recover(ctx, tool):
    """recover_interrupted() before a call: always in the server and before every writing CLI
    command; before a read-only one when its journal may hold a record (looked for without the
    import of platformdirs, 6 ms of a 15 ms read; docs/decisions.md#journaled-commits)."""
    said, ctx.recovered = ctx.recovered, []  # (what the server found as it started)
    if not ctx.mcp and tool.read_only and not ctx._cache_dir and not _journal_may_hold(ctx):
        return said
    return said + _recovery_said(ctx)


def _recovery_said(ctx):
    """recover_interrupted()'s warnings; one saying it failed instead of its error (not fatal to
    the call: the record stays, and the next call tries again)."""
    try:
        return recover_interrupted(ctx)
    except ToolError as exc:  # (its words, not its arguments: `('IO', 'io')` was said)
        return [("w.recovery_failed", {"detail": f"{exc.code}: {exc.to_dict(ctx.lang)['message']}"})]
    except OSError as exc:
        return [("w.recovery_failed", {"detail": exc.strerror or str(exc)})]


# ====================================================================================================
# 10. MCP server: newline-delimited JSON-RPC 2.0 on stdin/stdout (docs/behaviour.md#json-rpc-transport)
# ====================================================================================================


def encode_message(message):
    """One line of JSON-RPC: a reply, or a batch's list of them. U+0085, U+2028 and U+2029 go
    escaped: valid in JSON as they are, a client that splits lines the Unicode way (Python's
    str.splitlines) would cut the reply there."""
    text = (
        "[" + ",".join(map(_reply_text, message)) + "]" if isinstance(message, list) else _reply_text(message)
    )
    if not text.isascii():
        for char, escaped in _LINE_BREAKS_ESCAPED:
            if char in text:
                text = text.replace(char, escaped)
    return text.encode("utf-8") + b"\n"


_LINE_BREAKS_ESCAPED = (("\x85", "\\u0085"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def _reply_text(reply):
    """A reply as strict JSON text; an id holding a lone surrogate is sent back escaped (`\\ud800`)
    exactly as it came, where the rest of the text shows U+FFFD (a client must match its id)."""
    request_id = reply.get("id") if isinstance(reply, dict) else None
    long_number = isinstance(request_id, LongNumber)
    if long_number or (isinstance(request_id, str) and display_text(request_id) != request_id):
        import json

        rest = dumps_strict(
            {k: v for k, v in reply.items() if k not in ("jsonrpc", "id")}, separators=(",", ":")
        )
        said = request_id.digits if long_number else json.dumps(request_id)
        return '{"jsonrpc":"2.0","id":' + said + "," + rest[1:]
    return dumps_strict(reply, separators=(",", ":"))


class _Places(list):
    """An error's list of places (`candidates`, `found_at`: {start, end} objects), at most
    LISTED_MAX of them; `found` counts them all. Cut where it is made: each failed item of an edit
    keeps its error, and 40 items whose `old` stood on 200,000 lines held 2.7 GB."""

    def __init__(self, places, found):
        super().__init__(places)
        self.found = found


def _places(spans):
    """_Places of the first LISTED_MAX of `spans` ((start, end) line pairs)."""
    return _Places([{"start": a, "end": b} for a, b in spans[:LISTED_MAX]], len(spans))


def _cut_error_data(error):
    """A server's error cut to a size a model can take (also in each failed be-edit item): the
    file texts (`actual`, `current`, `changes`) to READ_MAX_CHARS characters, at a line's end where
    one is in reach (a mismatched `old` of megabytes found a closest block of megabytes); its lists
    of places (`candidates`, `found_at`), cut to LISTED_MAX entries where they are made (_places:
    an `old` of one letter was found 300,000 times, a 10 MB reply), get a warning saying how many
    there are. Returns the warnings."""
    warnings = []
    named = _error_parts(error)
    for data in (error, *(error.get("failed") or ())):
        for name in ("actual", "current", "changes"):
            text = data.get(name)
            if isinstance(text, str) and len(text) > READ_MAX_CHARS:
                cut = text.rfind("\n", 0, READ_MAX_CHARS) + 1 or READ_MAX_CHARS
                data[name] = text[:cut]
                if id(data) in named:
                    warnings.append(
                        ("w.field_cut", {"name": named[id(data)] + name, "shown": cut, "length": len(text)})
                    )
    return warnings + _places_cut(error)


def _error_parts(error):
    """{id of the data: the prefix of its names} for an error's data, or, when items failed, for each
    failed item's (`failed[1].`): the error's own data repeats the first item's, named once."""
    failed = error.get("failed") or ()
    return {id(item): f"failed[{k}]." for k, item in enumerate(failed)} or {id(error): ""}


def _places_cut(error):
    """The warnings of an error (or of its failed items) whose lists of places were cut where
    they were made (_places), or here, where the failed items' lists hold more than LISTED_MAX
    places together (_share_places): each names the list and says how many there are; more than
    _CUT_NAMED such lists, one warning says it of all. The CLI's errors get them too."""
    _share_places(error)
    cut = _lists_cut(error)
    if len(cut) > _CUT_NAMED:
        listed, found = sum(one["listed"] for one in cut), sum(one["found"] for one in cut)
        return [
            ("w.lists_cut", {"count": len(cut), "first": cut[0]["name"], "listed": listed, "found": found})
        ]
    return [("w.list_cut", one) for one in cut]


def _lists_cut(error):
    """[{name, listed, found}] of each list of places of an error (or of its failed items) that
    holds fewer than were found."""
    cut, named = [], _error_parts(error)
    for data in (error, *(error.get("failed") or ())):
        prefix = named.get(id(data))
        for name in ("candidates", "found_at"):
            places = data.get(name)
            found = getattr(places, "found", 0)
            if prefix is not None and found > len(places or ()):
                cut.append({"name": prefix + name, "listed": len(places), "found": found})
    return cut


_CUT_NAMED = 3  # lists of places cut that each get their own warning
_SHARE_MIN = 5  # places each failed item lists at least, however many failed


def _share_places(error):
    """The failed items' lists of places, when they hold more than LISTED_MAX places together,
    cut to an equal share each (at least _SHARE_MIN): 500 AMBIGUOUS items of 100 places each made
    a 4 MB reply. Each item's message names its first places too."""
    lists = [
        (item, name)
        for item in error.get("failed") or ()
        for name in ("candidates", "found_at")
        if item.get(name)
    ]
    if sum(len(item[name]) for item, name in lists) <= LISTED_MAX:
        return
    share = max(_SHARE_MIN, LISTED_MAX // len(lists))
    for item, name in lists:
        places = item[name]
        if len(places) > share:
            item[name] = _Places(places[:share], getattr(places, "found", len(places)))


def error_details(error, lang="en", limit=30, chars=4000):
    """The data a model needs to correct its call, as compact text lines (many clients show the
    model only the text of an error result, not its structured content): each text at most
    `limit` lines and `chars` characters."""

    def cut(text):
        lines = str(text).split("\n", limit)
        shown = "\n".join(lines[:limit])
        return shown[:chars] + ("\n..." if len(lines) > limit or len(shown) > chars else "")

    out = []
    closest = error.get("closest")
    if isinstance(closest, dict):
        out.append(_closest_detail(closest, lang))
    # (`actual` is shown, unless it is the closest block itself: `old` searched in the whole file)
    named = (error.get("start"), error.get("end"))
    same = isinstance(closest, dict) and named == (closest.get("start"), closest.get("end"))
    if error.get("actual") not in (None, "") and not same:
        out.append(tr(lang, "detail.actual", text=cut(error["actual"])))
    out += _span_details(error, lang)
    if error.get("changes"):
        out.append(tr(lang, "detail.changes", text=cut(error["changes"])))
    elif error.get("current") not in (None, ""):
        out.append(tr(lang, "detail.now", text=cut(error["current"])))
    out += [_item_detail(item, lang) for item in (error.get("failed") or ())[:20]]
    return "".join("\n" + line for line in out)


def _item_detail(item, lang):
    """The line of an error's details for one failed item of an edit."""
    return tr(lang, "detail.item", **{k: item.get(k) for k in ("index", "code", "message")})


def _span_details(error, lang):
    """The lines of an error's details that list spans (found_at, candidates)."""
    out = []
    for key in ("found_at", "candidates"):
        if error.get(key):
            where = ", ".join(f"{span['start']}-{span['end']}" for span in error[key][:20])
            more = getattr(error[key], "found", len(error[key])) - 20
            out.append(tr(lang, "detail." + key, where=where + (f", … (+{more})" if more > 0 else "")))
    return out


def _closest_detail(closest, lang):
    """The line of an error's details that names the closest block and its first difference."""
    fields = {k: closest.get(k) for k in ("start", "end", "similarity", "viewed_code_id")}
    words = describe_difference(closest.get("first_difference"), lang)
    key = "detail.closest" if fields["viewed_code_id"] else "detail.closest_twins"
    return tr(lang, key, words=words, **fields)


class LongNumber:
    """A JSON integer of more digits than Python's int() takes from text (4,300), kept as its
    digits: an id is echoed as it was sent (the client waited for ever on a parse error with id
    null), and an argument is refused by its name, as any value that is no integer."""

    __slots__ = ("digits",)

    def __init__(self, digits):
        self.digits = digits

    def __repr__(self):
        return f"{self.digits[:12]}...({len(self.digits)} digits)"


def _with_digits(value):
    """`value` with each LongNumber in it as its digits (a chip keeps a call's arguments as JSON,
    which json.dumps could not write: the content beside a 5,000-digit `start` was kept nowhere)."""
    if isinstance(value, LongNumber):
        return value.digits
    if isinstance(value, dict):
        return {key: _with_digits(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_digits(item) for item in value]
    return value


def _json_int(digits):
    try:
        return int(digits)
    except ValueError:
        return LongNumber(digits)


def _request_fault(message):
    """What makes a message no JSON-RPC 2.0 request or notification (a detail key), or None: a
    string or integer id when there is one, a string method, `"jsonrpc": "2.0"`."""
    request_id = message.get("id")
    valid = (str, int, LongNumber)
    if "id" in message and (isinstance(request_id, bool) or not isinstance(request_id, valid)):
        return "rpc.bad_id"
    if not isinstance(message.get("method"), str):
        return "rpc.no_method"
    return None if message.get("jsonrpc") == "2.0" else "rpc.bad_version"


_DEEP_LINE_READ = 1 << 20  # bytes of a line too deep for json read without it (about 1 s a MiB)
_JSON_LEXEME = _LazyPattern(  # (a string, a scalar, or a bracket, colon or comma; spaces before it)
    r'[ \t\n\r]*(?:("(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")'
    r"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null|NaN|-?Infinity)|([][{}:,]))"
)
_JSON_MOVES = {  # (what is expected, the token) -> what is expected next; "+X" opens X, "-" closes
    ("value", "v"): "after", ("value", "{"): "+{", ("value", "["): "+[",
    ("first", "v"): "after", ("first", "{"): "+{", ("first", "["): "+[", ("first", "]"): "-",
    ("key", "}"): "-", ("key", "s"): "colon", ("key2", "s"): "colon", ("colon", ":"): "value",
    ("next{", ","): "key2", ("next{", "}"): "-", ("next[", ","): "value", ("next[", "]"): "-",
}  # fmt: skip


def _not_a_request(lang, message, batches):
    """-32600 for JSON that is no request object: a batch (a non-empty array) refused because no
    batch is taken (`batches` false: protocol version 2025-03-26 was not agreed) says when one is."""
    detail = "rpc.batch" if isinstance(message, list) and message and not batches else "rpc.not_object"
    return _rpc_error(None, -32600, tr(lang, "mcp.invalid_request", detail_key=detail))


def _top_level_id(line):
    """(whether `line` is one JSON value, the `id` of its top-level object, whether that is a
    request, with a `method` and an `id`, or a batch) for a line too deeply nested for json to
    read, read without recursion: a request of valid JSON is answered for its id (a string or an
    integer: else None; the last `id` key, as json keeps), a response or a notification not at
    all, any other line is no JSON."""
    import json

    text, stack, state, pos, key, found = line.decode("utf-8-sig", "replace"), [], "value", 0, None, None
    keys = set()  # (those of the top-level object)
    while state != "end" and (m := _JSON_LEXEME.match(text, pos)):
        pos, (token, kind) = m.end(), _json_lexeme(m)
        if state == "value" and stack == ["{"] and key == "id":
            found = _json_id(token, kind)
        state = _json_move(state, kind, stack)
        if state is None:
            return False, None, False
        if state == "colon":  # (a key: where it stands; the last key read is no key of what follows)
            key = json.loads(token)
            keys.add((key, len(stack)))
    valid = state == "end" and not text[pos:].strip(" \t\n\r")  # (json's whitespace only)
    return valid, found, _answered(text, keys)


def _answered(text, keys):
    """Whether a message too deep to read is answered, `keys` being (key, depth) of the keys read:
    a request (a `method` and an `id` at the top) or a batch, not a response or a notification."""
    return text.lstrip(" \t\n\r")[:1] == "[" or {("method", 1), ("id", 1)} <= keys


def _json_lexeme(m):
    """(text, kind) of a _JSON_LEXEME match: s a string, v another scalar, else the character."""
    if m.group(1):
        return m.group(1), "s"
    return (m.group(2), "v") if m.group(2) else (m.group(3), m.group(3))


def _json_id(token, kind):
    """The request id a JSON token is (a string or an integer), else None."""
    import json

    value = json.loads(token, parse_int=_json_int) if kind in ("s", "v") else None
    return None if isinstance(value, (bool, float)) else value


def _json_move(state, kind, stack):
    """What a JSON reader expects after `kind` (s: a string, v: another scalar, or a bracket,
    colon or comma) where it expected `state`; None when the token cannot stand there."""
    move = _JSON_MOVES.get((state, kind)) or (kind == "s" and _JSON_MOVES.get((state, "v")))
    if not move:
        return None
    if move[0] == "+":
        stack.append(move[1])
        return "key" if move[1] == "{" else "first"
    if move == "-":
        stack.pop()
        move = "after"
    return move if move != "after" else ("next" + stack[-1] if stack else "end")


def _rpc_error(request_id, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


_LINE_PIECE = 1 << 24  # bytes a request line is read in


def _send_whole(stream, data):
    """Write `data` whole to the binary `stream` and flush it, or raise. A raw stream (the one
    PYTHONUNBUFFERED=1 gives) takes part of a large message and returns that count; a descriptor
    that a process sharing it made non-blocking since the start takes what fits and raises
    BlockingIOError, or returns None. The rest then waits until it can go: a reply cut short ran
    into the next one (found by an attack), and a host that had left went unnoticed."""
    view = memoryview(data)
    while view:
        try:
            written = stream.write(view)
        except BlockingIOError as exc:
            written = exc.characters_written
        if not written:
            _wait_for(stream, writing=True)
        view = view[written or 0 :]
    while True:
        try:
            return stream.flush()
        except BlockingIOError:
            _wait_for(stream, writing=True)


def _wait_for(stream, writing):
    """Wait until `stream`'s descriptor can be read, or written (a non-blocking one); whether it can."""
    import select
    import time

    try:
        fd = stream.fileno()
        ready = select.select([] if writing else [fd], [fd] if writing else [], [])
    except (AttributeError, ValueError, OSError):  # (no descriptor, or one select cannot take: Windows pipes)
        time.sleep(0.01)
        return True
    return bool(ready[0] or ready[1])


def _read_piece(stdin, size):
    """stdin.readline(size), but a descriptor made non-blocking since the start (a process sharing
    it) that has nothing yet is waited on: its b"" is no end of input (the server ended at once)."""
    piece = stdin.readline(size)
    while not piece and not _blocking(stdin) and _wait_for(stdin, writing=False):
        piece = stdin.readline(size)
        if not piece:  # (readable, and nothing: the end)
            break
    return piece


def _blocking(stream):
    """Whether `stream`'s descriptor blocks (one without a descriptor is taken to)."""
    try:
        return os.get_blocking(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return True


def _read_line(stdin):
    """The next line of `stdin` (b"" at its end), or None for a line larger than memory, read to
    its end and dropped. It is read in pieces, so a line whose bytes were all read but could not
    be joined is known to have ended: the skip that follows never eats the next request."""
    pieces = []
    try:
        while not pieces or (pieces[-1] and not pieces[-1].endswith(b"\n")):
            pieces.append(_read_piece(stdin, _LINE_PIECE))
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)
    except MemoryError:
        ended = bool(pieces) and (not pieces[-1] or pieces[-1].endswith(b"\n"))
        pieces = None
        while not ended:
            chunk = _read_piece(stdin, 1 << 20)
            ended = not chunk or chunk.endswith(b"\n")
        return None


def _error_result(error, text):
    """A tools/call result for a failed call: its words as text, its error as structuredContent."""
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"status": "error", "error": error},
        "isError": True,
    }


def _utf8_text(line):
    """A request line's bytes as strict UTF-8 text, a UTF-8 BOM skipped (UnicodeDecodeError names
    the first byte that is not)."""
    return line.decode("utf-8-sig" if line[:3] == b"\xef\xbb\xbf" else "utf-8")


class Server:
    """Dispatches JSON-RPC messages to the tool table; nothing tool-specific lives here."""

    def __init__(self, ctx, prefix=True, underscore=False):
        self.ctx = ctx
        self.prefix, self.underscore = prefix, underscore
        self._tool_list = None
        self.version = None  # (the protocol version agreed by `initialize`)

    def handle_line(self, line):
        """One input line -> one reply message or None (notifications, blank lines). A batch (a
        JSON array of messages, which protocol version 2025-03-26 requires a server to take) ->
        the list of their replies, in order, or None when all were notifications; under any other
        version (later ones dropped batches) or before `initialize`, -32600."""
        import json

        lead = len(line) - len(line.lstrip())
        line = line.strip()
        if not line:
            return None
        try:  # (decoded first: json.loads of bytes takes UTF-8-encoded surrogates, CESU-8, as text)
            message = json.loads(_utf8_text(line), parse_int=_json_int)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            return self._parse_error(line, exc, lead)
        except MemoryError:
            return self._too_large()
        if isinstance(message, list) and message and self.version == "2025-03-26":
            return self._batch(message)
        return self.handle_message(message)

    def _batch(self, messages):
        """The replies to a batch's messages, in order, or None when all were notifications."""
        replies = [self.handle_message(one) for one in messages]
        return [reply for reply in replies if reply is not None] or None

    def handle_message(self, message):
        """One parsed JSON-RPC message -> its reply, or None."""
        if not isinstance(message, dict):
            return _not_a_request(self.ctx.lang, message, self.version == "2025-03-26")
        if "method" not in message and ("result" in message or "error" in message):
            return None  # a response to something we never asked: ignore
        wrong = _request_fault(message)
        if wrong is not None or "id" not in message:  # (notifications are never answered)
            return None if wrong is None else self._invalid(message, wrong)
        request_id = message["id"]
        try:
            return self._dispatch(request_id, message["method"], message.get("params"))
        except Exception as exc:  # the server never dies from input
            detail = f"{type(exc).__name__}: {exc}"
            return _rpc_error(request_id, -32603, tr(self.ctx.lang, "internal", detail=detail))

    def _invalid(self, message, detail_key):
        """-32600 for `message`, with its id when that is valid (else null, as for one without)."""
        request_id = message.get("id") if detail_key != "rpc.bad_id" else None
        return _rpc_error(request_id, -32600, tr(self.ctx.lang, "mcp.invalid_request", detail_key=detail_key))

    def _too_large(self):
        return _rpc_error(None, -32600, tr(self.ctx.lang, "mcp.too_large"))

    def _parse_error(self, line, exc, lead=0):
        """-32700 for a line that is no JSON (kept as a chip when long), or not UTF-8; -32600 with
        its id for one too deeply nested for json (valid JSON, maybe: its id, if found, is answered).
        `lead`: the blanks before the line, which positions count."""
        try:
            return self._parse_error_of(line, exc, lead)
        except MemoryError:  # (a line too long even to keep as a chip)
            return _rpc_error(None, -32700, tr(self.ctx.lang, "mcp.parse_error", position=lead))

    def _too_deep(self, request_id, request):
        """The answer to a message too deep to read: -32600 for its id, if it is a request."""
        if not request:
            return None
        detail = tr(self.ctx.lang, "mcp.invalid_request", detail_key="rpc.too_deep")
        return _rpc_error(request_id, -32600, detail)

    def _parse_error_of(self, line, exc, lead):
        deep = isinstance(exc, RecursionError) and len(line) <= _DEEP_LINE_READ
        valid, request_id, request = _top_level_id(line) if deep else (False, None, False)
        if valid:  # (a response or a notification, however deep, is answered by nothing)
            return self._too_deep(request_id, request)
        if isinstance(exc, UnicodeDecodeError):
            bom = 3 if line[:3] == b"\xef\xbb\xbf" else 0  # (utf-8-sig counts after it)
            message = tr(self.ctx.lang, "mcp.parse_utf8", position=lead + bom + exc.start)
        else:
            message = tr(self.ctx.lang, "mcp.parse_error", position=lead + (getattr(exc, "pos", None) or 0))
        if len(line) > CHIP_MIN_ARGS_BYTES:
            raw = line.decode("utf-8", "replace")
            chip_id, warnings = ChipStore(self.ctx).save("jsonrpc", None, message, raw)
            if chip_id:
                message += tr(self.ctx.lang, "mcp.parse_chip", id=chip_id)
            message += "".join("; " + w for w in _local_warnings(self.ctx, warnings))
        return _rpc_error(None, -32700, message)

    def _dispatch(self, request_id, method, params):
        if method == "initialize":
            result = self._initialize(params if isinstance(params, dict) else {})
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            if isinstance(params, dict) and params.get("cursor") is not None:  # (one page: none is issued)
                message = tr(self.ctx.lang, "mcp.invalid_params", detail_key="rpc.bad_cursor")
                return _rpc_error(request_id, -32602, message)
            result = {"tools": self.tool_list()}
        elif method == "tools/call":
            if not isinstance(params, dict):
                return _rpc_error(
                    request_id, -32602, tr(self.ctx.lang, "mcp.invalid_params", detail_key="rpc.bad_params")
                )
            tool = find_tool(params.get("name"))
            if tool is None:
                return self._unknown_tool(request_id, params)
            result = self.call(tool, params.get("arguments"))
        else:
            message = tr(self.ctx.lang, "mcp.unknown_method", method=_clip(str(method)))
            return _rpc_error(request_id, -32601, message)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _initialize(self, params):
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        self.version = version
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": PROGRAM, "title": "Better Edit Tools", "version": __version__},
            "instructions": tr(self.ctx.lang, "mcp.instructions", **self._names()),
        }

    def _unknown_tool(self, request_id, params):
        import difflib

        names = [public_name(t, self.prefix, self.underscore) for t in TOOLS if t.mcp]
        if not isinstance(params.get("name"), str):
            closest = names[:3]
            message = tr(self.ctx.lang, "mcp.no_tool_name", closest=", ".join(closest))
            return _rpc_error(request_id, -32602, message, {"closest": closest})
        name = _clip(params["name"])  # (no tool name is near one of 60 characters)
        closest = difflib.get_close_matches(name, names, n=3, cutoff=0.3) or names[:3]
        if "patch" in name.lower():  # (the CLI's `patch`, a host's apply_patch: be-edit takes diffs)
            edit = self._names()["edit"]
            closest = [edit] + [n for n in closest if n != edit][:2]
            message = tr(self.ctx.lang, "mcp.unknown_tool_patch", name=name, edit=edit)
            return _rpc_error(request_id, -32602, message, {"closest": closest})
        message = tr(self.ctx.lang, "mcp.unknown_tool", name=name, closest=", ".join(closest))
        return _rpc_error(request_id, -32602, message, {"closest": closest})

    def _names(self):
        """Each tool's name as this server lists it (--no-prefix, --underscore-names), for texts."""
        return tool_names(self.prefix, self.underscore)

    def tool_list(self, full=False):
        """The tools/list entries; `full` (for docs/mcp.md) describes every argument and member."""
        if self._tool_list is None or full:
            lang = self.ctx.lang
            listed = [
                {
                    "name": public_name(tool, self.prefix, self.underscore),
                    "title": tool.title,
                    "description": tr(lang, "d." + tool.name, **self._names())
                    + (tr(lang, "d.workflow", **self._names()) if tool.name in _VIEWED_EDITS else ""),
                    "inputSchema": tool.input_schema(lang, full),
                    "outputSchema": tool.output_schema(full),
                    "annotations": tool.annotations(),
                }
                for tool in TOOLS
                if tool.mcp
            ]
            if full:
                return listed
            self._tool_list = listed
        return self._tool_list

    def call(self, tool, arguments):
        """A tools/call result: structuredContent + text, or an isError result with the chip (docs/mcp.md)."""
        try:
            result = call_tool(self.ctx, tool, arguments)
            return {
                "content": [{"type": "text", "text": dumps_strict(result, separators=(",", ":"))}],
                "structuredContent": result,
            }
        except ToolError as exc:
            error = exc.to_dict(self.ctx.lang, self._names())
        except MemoryError:  # (no bug: a call too large for the memory there is)
            error = _out_of_memory(public_name(tool, self.prefix, self.underscore)).to_dict(self.ctx.lang)
        except Exception as exc:  # a bug: report it, keep serving
            error = ToolError("INTERNAL", "internal", detail=f"{type(exc).__name__}: {exc}").to_dict(
                self.ctx.lang
            )
        warnings = _cut_error_data(error)
        text = f"{error['code']}: {error['message']}\nhint: {error['hint']}" + error_details(
            error, self.ctx.lang
        )
        try:
            chip_id, kept = self._keep_arguments(tool, arguments, error)
        except MemoryError:  # (arguments too large to keep: the error is still the call's own)
            chip_id, kept = None, []
        warnings += kept
        if chip_id:
            error["chip"] = chip_id
            text += "\n" + tr(self.ctx.lang, "mcp.args_chip", id=chip_id)
        if warnings:
            error["warnings"] = _local_warnings(self.ctx, warnings)
            text += "".join("\n" + tr(self.ctx.lang, "cli.warning", text=w) for w in error["warnings"])
        return _error_result(error, text)

    def _keep_arguments(self, tool, arguments, error):
        import json

        if tool.name == "insert-chip" or nesting(arguments) > MAX_NESTING:
            return None, []  # (a chip's own arguments hold no text, and keeping them could drop it)
        arguments = _with_digits(arguments)
        try:
            size = len(json.dumps(arguments, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        except (TypeError, ValueError):
            return None, []
        if size <= CHIP_MIN_ARGS_BYTES:
            return None, []
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):
                pass
        text = arguments.get("content") if isinstance(arguments, dict) else None
        return ChipStore(self.ctx).save(
            public_name(tool),
            arguments,
            f"{error['code']}: {error['message']}",
            text if isinstance(text, str) else None,
        )

    def serve(self, stdin, stdout):
        while True:
            line = _read_line(stdin)
            if line == b"":
                break
            reply = self._too_large() if line is None else self.handle_line(line)
            if reply is not None:
                try:
                    data = encode_message(reply)
                except MemoryError:
                    data = encode_message(self._unsendable(reply))
                try:
                    _send_whole(stdout, data)
                except OSError as exc:  # (the client went away: serve_stdio ends as at EOF)
                    _say_unsent(exc.strerror or str(exc))
                    raise
            _result_is_out()
        return 0

    def _unsendable(self, reply):
        """For a reply too large to encode in the memory there is: a tool result saying so (and,
        for a change that was made, that it stands, with its event), or -32603 for a batch."""
        result = reply.get("result") if isinstance(reply, dict) else None
        done = result.get("structuredContent") if isinstance(result, dict) else None
        if not isinstance(done, dict):
            return _rpc_error(
                None if isinstance(reply, list) else reply.get("id"),
                -32603,
                tr(self.ctx.lang, "mcp.unsendable"),
            )
        event_id, made = done.get("event_id"), done.get("changed") and not done.get("preview")
        key = ("unsendable_made" if event_id else "unsendable_made_no_event") if made else "unsendable"
        error = ToolError("TOO_LARGE", key, event_id=event_id).to_dict(self.ctx.lang)
        text = f"{error['code']}: {error['message']}\nhint: {error['hint']}"
        return {"jsonrpc": "2.0", "id": reply["id"], "result": _error_result(error, text)}


# ====================================================================================================
# 11. CLI: argparse built from TOOLS (docs/cli.md)
# ====================================================================================================

_GLOBAL_VALUE_FLAGS = ("--lang", "--root", "--max-chips", "--encoding", "--dump-tools")
_GLOBAL_OPTIONS = (
    *_GLOBAL_VALUE_FLAGS,
    "--no-prefix",
    "--underscore-names",
    "--help",
    "--version",
    "--output",
)


class UsageError(Exception):
    """A mistake in the command line or environment: message on stderr, exit 2."""


_KEEPS_CHIPS = ("delete", "edit")  # the commands that keep text as chips (what they delete)


def _global_options(parser, lang, defaults=True, tool=None):
    """The global flags; a command's parser (`tool`) accepts them all but shows only those that
    matter to it: not the server's naming flags, nor --max-chips where nothing is kept as a chip."""
    import argparse

    server_only = argparse.SUPPRESS if tool is not None else None
    no_chips = argparse.SUPPRESS if tool is not None and tool.name not in _KEEPS_CHIPS else None
    once = getattr(parser, "once", "store")
    for flag, options, help_key, hidden in (
        ("--lang", {"choices": ("en", "zh"), "action": once}, "g.lang", None),
        ("--no-prefix", {"action": "store_true"}, "g.no_prefix", server_only),
        ("--underscore-names", {"action": "store_true"}, "g.underscore", server_only),
        ("--root", {"metavar": "DIR", "action": once}, "g.root", None),
        ("--max-chips", {"metavar": "N", "action": once}, "g.max_chips", no_chips),
        ("--encoding", {"metavar": "NAME", "action": once}, "p.encoding", None),
    ):
        value = False if options["action"] == "store_true" else None
        default = value if defaults else argparse.SUPPRESS
        parser.add_argument(flag, default=default, help=hidden or tr(lang, help_key), **options)


# argparse's own words, for --lang zh. argparse looks them up through a module-level gettext `_`;
# instead of replacing that for the whole process, our parser class translates what it prints.
_ARGPARSE_ZH = {
    "usage: ": "用法：",
    "options": "选项",
    "positional arguments": "位置参数",
    "show this help message and exit": "显示此帮助并退出",
    "show program's version number and exit": "显示版本号并退出",
    "the following arguments are required: %s": "缺少必需参数：%s",
    "unrecognized arguments: %s": "无法识别的参数：%s",
    "expected one argument": "需要一个值",
    "invalid choice: %(value)r (choose from %(choices)s)": "无效的选项：%(value)r（可选：%(choices)s）",
    "argument %(argument_name)s: %(message)s": "参数 %(argument_name)s：%(message)s",
    "ambiguous option: %(option)s could match %(matches)s": "有歧义的选项：%(option)s 可匹配 %(matches)s",
    "invalid %(type)s value: %(value)r": "无效的 %(type)s 值：%(value)r",
}


def _translate_argparse(message):
    """An argparse message in Chinese: each known English template is matched and refilled."""
    for english, chinese in _ARGPARSE_ZH.items():
        names = re.findall(r"%\((\w+)\)[rs]|%s", english)
        pattern = re.escape(english)
        pattern = re.sub(r"%\\\((\w+)\\\)[rs]", lambda m: f"(?P<{m.group(1)}>.*?)", pattern)
        pattern = pattern.replace("%s", "(?P<s>.*?)")
        match = re.fullmatch(pattern, message, re.S) if names else None
        if match:
            fields = {
                k: _translate_argparse(v) if k == "message" else v for k, v in match.groupdict().items()
            }
            result = chinese.replace("%s", fields.pop("s", ""))
            return re.sub(r"%\((\w+)\)[rs]", lambda m, f=fields: f.get(m.group(1), ""), result)
    return _ARGPARSE_ZH.get(message, message)


@functools.cache  # found once: argparse makes a formatter for every argument
def _terminal_columns():
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 80


def _parser_class(lang, output=None):
    """argparse.ArgumentParser and its formatter; for Chinese, subclasses that translate argparse's
    own words (a HelpFormatter subclass, the documented way to shape help). With `output` "json"
    (-o json on the command line), a usage error is JSON on stdout (docs/cli.md#output-text-and-json)."""
    import argparse

    class Plain(argparse.RawDescriptionHelpFormatter):
        """Sized like argparse's own (COLUMNS, else the terminal, else 80), found once per run."""

        def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
            width = _terminal_columns() - 2 if width is None else width
            super().__init__(prog, indent_increment, max_help_position, width)

    class StoreOnce(argparse.Action):
        """argparse's `store`, but an option given twice with different values is a usage error
        (`-s 1 -s 2` kept the last, silently); an Action subclass is the documented way to change
        what storing does."""

        def __call__(self, parser, namespace, values, option_string=None):
            given = vars(namespace).setdefault("_given", {})
            if self.dest in given and getattr(namespace, self.dest) != values:
                key = "cli.twice" if given[self.dest] == option_string else "cli.twice_as"
                parser.error(tr(lang, key, option=given[self.dest], other=option_string))
            given[self.dest] = option_string
            setattr(namespace, self.dest, values)

    class Parser(argparse.ArgumentParser):
        once = StoreOnce

        def error(self, message):
            """argparse's message (translated for Chinese), and a hint (_usage_hint)."""
            said = _translate_argparse(message) if lang == "zh" else message
            hint = _usage_hint(
                lang, message, self.prog, getattr(self, "options", ()), getattr(self, "argv", ())
            )
            if output == "json":
                usage = self.format_usage()
                usage = " ".join(usage[usage.find(self.prog) :].split())  # (without "usage: ")
                self.exit(_usage_failed(lang, f"{self.prog}: {said}", self.prog, output, hint, usage))
            self.print_usage(sys.stderr)
            text = tr(lang, "cli.prog_error", prog=self.prog, message=said)
            if hint:
                text += "\n" + tr(lang, "cli.hint", hint=hint)
            self.exit(2, text + "\n")

    if lang != "zh":
        return Parser, Plain

    class Formatter(Plain):
        def add_usage(self, usage, actions, groups, prefix=None):
            super().add_usage(usage, actions, groups, _ARGPARSE_ZH["usage: "] if prefix is None else prefix)

        def start_section(self, heading):
            super().start_section(_ARGPARSE_ZH.get(heading, heading))

        def _get_help_string(self, action):
            return _ARGPARSE_ZH.get(action.help, action.help)

    class ChineseParser(Parser):
        def __init__(self, *args, **kwargs):
            kwargs["formatter_class"] = Formatter
            super().__init__(*args, **kwargs)

    return ChineseParser, Formatter


def build_parser(lang):
    """The top-level parser, with every command as a subparser (for --help and the server's flags)."""
    import argparse

    parser_class, formatter = _parser_class(lang)
    parser = parser_class(
        prog=PROGRAM,
        description=tr(lang, "cli.description"),
        epilog=tr(lang, "cli.epilog"),
        formatter_class=formatter,
    )
    parser.add_argument("-V", "--version", action="version", version=__version__)
    _global_options(parser, lang)
    parser.add_argument("--dump-tools", choices=("json", "markdown"), help=argparse.SUPPRESS)
    commands = parser.add_subparsers(  # (a `prog` given spares argparse formatting a usage to find it)
        dest="command", metavar="COMMAND", parser_class=parser_class, prog=PROGRAM
    )
    for tool in TOOLS:
        if tool.cli:
            _add_command(commands, tool, lang, formatter)
    return parser


def _add_command(commands, tool, lang, formatter):
    sub = commands.add_parser(
        tool.cli,
        help=tr(lang, _cli_key("d." + tool.name)).split(". ")[0],
        description=tr(lang, _cli_key("d." + tool.name)),
        epilog=tr(lang, "x." + tool.name) + "\n\n" + tr(lang, "cli.exit_status"),
        formatter_class=formatter,
    )
    _command_arguments(sub, tool, lang, defaults=False)


def _command_parser(lang, tool, output=None, word=False):
    """The parser of one command on its own: it takes the command line without the command word,
    global options anywhere, and names the command in its errors (argparse builds no parser of
    parsers: start-up time matters)."""

    parser_class, formatter = _parser_class(lang, output)
    parser = parser_class(
        prog=f"{PROGRAM} {tool.cli}",
        description=tr(lang, _cli_key("d." + tool.name)),
        epilog=tr(lang, "x." + tool.name) + "\n\n" + tr(lang, "cli.exit_status"),
        formatter_class=formatter,
    )
    parser.add_argument("-V", "--version", action="version", version=__version__, help=tr(lang, "p.version"))
    _command_arguments(parser, tool, lang, defaults=True, word=word)
    parser.set_defaults(command=tool.cli, dump_tools=None)
    parser.options = [
        *_GLOBAL_OPTIONS,
        *(flag for p in tool.params for flag in p.flags + tuple(a[1] for a in p.cli_also)),
    ]
    return parser


# Options agents guess, and what the command has instead: the first of those it has is the hint.
_OPTION_GUESSES = {
    "--new": ("--content",), "--text": ("--content",), "--new-text": ("--content",),
    "--replacement": ("--content",), "--replace": ("--content",), "--with": ("--content",),
    "--old-text": ("--old",), "--find": ("--old",), "--search": ("--old",), "--pattern": ("--old",),
    "--match": ("--old",), "--path": ("--file",), "--line": ("--start N", "--after-line N"),
    "--lines": ("--start N --end M",), "--range": ("--start N --end M",), "--at": ("--after-line N",),
    "--top": ("--after-line 0",), "--prepend": ("--after-line 0",), "--append": ("--after-line -1",),
    "--function": ("--target function:NAME", "--line N"), "--func": ("--target function:NAME", "--line N"),
    "--method": ("--target function:NAME", "--line N"), "--diff": ("--patch-file",),
    "--patch": ("--patch-file",), "--edits": ("--edits-file",), "--dry-run": ("--preview",),
}  # fmt: skip


def _option_near(word, options):
    """What a mistyped or guessed option `word` most likely meant, from the command's `options`
    (`--after_line`: --after-line; `--satrt`: --start; `--new`: --content), or None."""
    import difflib

    name = word.split("=", 1)[0].replace("_", "-")
    if name in options and name != word:
        return name
    for guess in _OPTION_GUESSES.get(name, ()):
        if guess.split()[0] in options:
            return guess
    near = difflib.get_close_matches(name, [o for o in options if o.startswith("--")], 1, 0.75)
    return near[0] if near else None


def _check_dashes(lang, args, options):
    """A usage error for what argparse would take in silence for another thing: a long option
    with one dash (`-content=x` is -c with the text "ontent=x", `-file=a` names the file "ile=a"),
    and `-c -`, the text "-" where standard input was meant (--content-file -)."""
    for arg, before in zip(args, [None, *args]):  # (no regex: every command pays for this)
        name = "-" + arg.split("=", 1)[0] if arg[:1] == "-" and arg[1:2] != "-" and " " not in arg else ""
        if len(name) > 3 and name in options:
            raise UsageError(tr(lang, "cli.one_dash", arg=arg, option=name))
        if arg == "-" and before in ("-c", "--content", "--old"):
            other = "--content-file" if before != "--old" else "--old-file"
            raise UsageError(tr(lang, "cli.text_dash", option=before, other=other))


def _guessed_option(argv, options):
    """(the first unknown long option of `argv`, the option of `options` it meant), or None: not an
    abbreviation argparse takes (`--tar` for --target)."""
    for arg in argv:
        name = arg.split("=")[0]
        taken = name in options or sum(o.startswith(name) for o in options) == 1
        near = _option_near(arg, options) if arg.startswith("--") and not taken else None
        if near:
            return name, near
    return None


def _value_hint(lang, option, prog, options, argv):
    """The hint of an option that met no value (`option`: argparse's words matched): one that
    starts with '-' goes after '=' (`-c -x` read -x as an option); else it needs one."""
    flags = [flag for flag in option.groups() if flag]
    after = [
        b for a, b in zip(argv, argv[1:]) if a in flags or a.startswith("--") and option[1].startswith(a)
    ]
    dash = bool(after) and after[-1].startswith("-") and after[-1].split("=")[0] not in options
    return tr(lang, "cli.dash_value" if dash else "cli.no_value", option=option.group(1), prog=prog)


def _usage_hint(lang, message, prog, options, argv):
    """The hint of an argparse usage `message`, or None: the option a guessed or mistyped one
    meant (also when a required option is missing, which argparse says first); where a stray word
    goes; how to name the file, or to give a value that starts with '-'."""
    option = re.match(r"argument (--[\w-]+)(?:/(-\w))?: expected one argument$", message)
    if option:
        return _value_hint(lang, option, prog, options, argv)
    guessed = (
        _guessed_option(argv, options) if message.startswith(("unrecognized", "the following")) else None
    )
    if guessed:
        return tr(lang, "cli.option_near", option=guessed[0], near=guessed[1])
    stray = re.match(r"unrecognized arguments: ([^-]\S*)", message)
    if stray:
        key = "cli.stray_number" if stray.group(1).lstrip("+-").isdigit() else "cli.stray_word"
        return tr(lang, key, word=stray.group(1), prog=prog)
    if re.match(r"the following arguments are required: --(file|edits-file)\b", message):
        return tr(lang, "cli.file_word", prog=prog)
    return None


def _command_arguments(sub, tool, lang, defaults, word=False):
    # (as a subparser, no defaults: the values given before the command stay; `word`: the command
    # line named the file as a word, so its option is not required)
    _global_options(sub, lang, defaults, tool)
    given = _word_option(tool) if word else None  # (the option the word gave)
    for param in tool.params:
        if param.name == "encoding":
            continue  # a global option, accepted here too
        kwargs = {"dest": param.name, "help": tr(lang, _cli_key(param.help))}
        if param.type == "boolean":
            sub.add_argument(*param.flags, action="store_true", default=None, **kwargs)
            continue
        if param.choices:
            kwargs["choices"] = param.choices
        required = param.required and not any(also[0] == "file" for also in param.cli_also)
        once = getattr(sub, "once", "store")
        if param.flags:  # (an argument with no flag of its own is given on the CLI by cli_also only)
            required = required and param.flags[0] != given
            sub.add_argument(*param.flags, metavar=param.metavar, required=required, action=once, **kwargs)
        _also_options(sub, lang, param, given)
    output = {"choices": ("text", "json"), "default": "text", "action": getattr(sub, "once", "store")}
    sub.add_argument("-o", "--output", help=tr(lang, "p.output"), **output)


def _also_options(sub, lang, param, word_flag):
    """The options of a Param's cli_also (`--content-file`, `--occurrence`); the one `word_flag`
    names is not required (the word after the command gave it)."""
    for kind, flag, help_key, *_default in param.cli_also:
        sub.add_argument(
            flag,
            dest=_also_dest(flag),
            metavar="PATH|-" if kind == "file" else "N",
            action=getattr(sub, "once", "store"),
            help=tr(lang, help_key),
            required=param.cli_required and flag != word_flag,
        )


def _word_option(tool):
    """The option a command also takes as the word right after it (docs/cli.md#the-file-as-a-word):
    --file, the file it works on (`read a.py`); else, for edit and patch, the option naming the
    file their input comes from (`patch fix.diff`)."""
    for param in tool.params:
        if param.name == "file" and param.flags:
            return param.flags[0]
    return next((also[1] for param in tool.params for also in param.cli_also if also[0] == "file"), None)


def _file_word(argv, position):
    """The argument right after the command at `position` when it is no option (`read a.py`,
    `patch fix.diff`, `edit -`): what the command's word option names. Only there: a word
    further on is more often a value that lost its quotes (`-c new line`)."""
    word = argv[position + 1] if position + 1 < len(argv) else None
    return word if word is not None and (word == "-" or not word.startswith("-")) else None


def _take_word(lang, tool, ns, word):
    """Into `ns`: what the word right after the command names, as its option would; a usage error
    when the option is given too (even with the same name: one name for one file)."""
    if word is None:
        return
    flag = _word_option(tool)
    dest = "file" if flag == "--file" else _also_dest(flag)
    if getattr(ns, dest, None) is not None:
        raise UsageError(tr(lang, "cli.word_twice", word=word, option=flag, other=getattr(ns, dest)))
    setattr(ns, dest, word)


def _also_dest(flag):
    return "also_" + flag.lstrip("-").replace("-", "_")


def _read_input(lang, path, source):
    """(the text, whether it came through a pipe or a socket) of a file, a pipe or stdin ("-") that
    an option names; a device other than a terminal or /dev/null (/dev/zero, /dev/urandom) is
    refused: reading it would never end."""
    try:
        if path == "-":
            if sys.stdin is None:  # (started with descriptor 0 closed)
                raise OSError(9, "standard input is closed")
            if _is_terminal(sys.stdin):  # a person there: say what it waits for (`patch` alone)
                _print_error(tr(lang, "cli.tty_input", program=PROGRAM, source=source))
            data, piped = _read_whole(sys.stdin.buffer, source, path)
        else:
            with open(path, "rb") as handle:
                data, piped = _read_whole(handle, source, path)
    except OSError as exc:
        inline = path.lstrip()[:1] in ("[", "{") or "\n" in path or path.startswith(("--- ", "diff ", "@@ "))
        raise ToolError(
            "INVALID_ARGUMENT",
            "input_unreadable",
            "input_inline.hint" if inline else "arg.hint",
            source=source,
            path=path,
            detail=exc.strerror or str(exc),
        ) from None
    try:
        return data.decode("utf-8-sig"), piped  # (a BOM marks the file's encoding: no text of it)
    except UnicodeDecodeError:
        raise ToolError("INVALID_ARGUMENT", "content_not_utf8", "arg.hint", source=source) from None


def _read_whole(handle, source, path):
    import stat

    st = os.fstat(handle.fileno())
    piped = stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)
    device = os.name != "nt" and (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode))
    if device and not handle.isatty():  # (Windows: NUL and CON are no files to compare; left as they were)
        try:
            null = os.path.samestat(st, os.stat(os.devnull))  # (/dev/null: empty, as scripts use it)
        except OSError:
            null = False
        if not null:
            raise ToolError("INVALID_ARGUMENT", "input_device", "arg.hint", source=source, path=path)
    try:
        return handle.read(), piped
    except MemoryError:
        raise ToolError("TOO_LARGE", "input_too_large", source=source, path=path) from None


def _one_stdin(lang, tool, ns):
    """A usage error when two options name standard input (`--old-file - --content-file -`): the
    first would read it all, the second got nothing."""
    flags = [flag for param in tool.params for _kind, flag, *_ in param.cli_also]
    stdin = [flag for flag in flags if getattr(ns, _also_dest(flag), None) == "-"]
    if len(stdin) > 1:
        raise UsageError(tr(lang, "cli.stdin_twice", option=stdin[0], other=stdin[1]))


def cli_arguments(lang, tool, ns):
    """The handler's argument dict from parsed options, driven by each Param's CLI data."""
    args = {}
    _one_stdin(lang, tool, ns)
    for param in tool.params:
        value = _undecoded_as_utf8(param, _cli_value(param, ns))
        if value is not None:
            args[param.name] = value
        for kind, flag, _help, *default in param.cli_also:
            _add_also(lang, args, param, kind, flag, getattr(ns, _also_dest(flag), None), default)
        if param.required and param.name not in args and param.cli_also:
            options = " / ".join(param.flags[:1] + tuple(also[1] for also in param.cli_also))
            raise UsageError(tr(lang, "cli.required", options=options, command=tool.cli))
    if ns.encoding:
        args["encoding"] = ns.encoding
    return args


_UNDECODED = _LazyPattern("[\udc80-\udcff]")  # (how Python hands over argv bytes that are not UTF-8)


def _undecoded_as_utf8(param, value):
    """`value`; text of --content or --old holding bytes of the command line that the locale could
    not decode (LC_ALL=C without UTF-8 mode hands over `ñ` as two escapes) read as UTF-8, or
    INVALID_ARGUMENT when they are not UTF-8: there is no text to write in the file's encoding."""
    if param.name not in ("content", "old") or not isinstance(value, str) or not _UNDECODED.search(value):
        return value
    try:
        return os.fsencode(value).decode("utf-8")
    except (UnicodeError, ValueError):
        raise ToolError("INVALID_ARGUMENT", "content_not_utf8", "arg.hint", source=param.flags[0]) from None


def _cli_value(param, ns):
    """A Param's value as its option gave it: a word it knows (e.g. "auto") turned into its value,
    its CLI default when the option is absent."""
    value = getattr(ns, param.name, None)
    if isinstance(value, str) and value.strip().lower() in param.cli_words:
        return param.cli_words[value.strip().lower()]
    return param.cli_default if value is None else value


def _read_option_file(lang, param, path, flag):
    """What the option `flag` names holds (_read_input); an empty standard input, or pipe
    (`--content-file /dev/stdin`, `<(gen)`), is INVALID_ARGUMENT: the sign of a command before
    the pipe that failed (`gen | ... -`). An empty file, /dev/null included, is empty content."""
    text, piped = _read_input(lang, path, flag)
    if text or not (piped or path == "-"):
        return text
    if param.name == "content":  # (an insert has no empty content)
        key = "content_stdin_empty" if path == "-" else "content_pipe_empty"
        hint = "content_stdin_empty_insert.hint" if param is P_INSERT_CONTENT else "content_stdin_empty.hint"
        raise ToolError("INVALID_ARGUMENT", key, hint, option=flag, path=path)
    key = "stdin_empty" if path == "-" else "pipe_empty"
    raise ToolError("INVALID_ARGUMENT", key, "stdin_empty.hint", option=flag, path=path)


def _add_also(lang, args, param, kind, flag, extra, default):
    """Into `args`: what a Param's second option gave (`kind` "file": the value read from a file;
    else an occurrence, a part of the target the first option gave); `default`: [what it stands
    for when absent and the first option is too] (patch reads stdin when no --patch-file is given)."""
    if extra is None and default and param.name not in args:
        extra = default[0]
    if extra is None:
        return
    if kind == "file":
        if param.name in args:
            raise UsageError(tr(lang, "cli.both", option=param.flags[0], other=flag))
        args[param.name] = _read_option_file(lang, param, extra, flag)
        return
    if param.name not in args:
        raise UsageError(tr(lang, "cli.needs", option=flag, other=param.flags[0]))
    target = _as_target(param.name, args[param.name])
    target["occurrence"] = extra
    args[param.name] = target


def _print(text, stream=None, is_json=False, lang=None):
    """`text` as lines on stdout. Characters its encoding cannot hold (PYTHONIOENCODING=ascii, a C
    locale without UTF-8 mode) are written as escapes, `\\uXXXX` in JSON: a traceback there came
    after the edit was made, and a script that retried on its exit status made it twice."""
    stream = stream or sys.stdout
    if stream is None:  # started with that descriptor closed
        raise BrokenPipeError(9, "output closed")
    text = text if text.endswith("\n") else text + "\n"
    if not is_json and _is_terminal(stream):
        text = _shown_on_terminal(text)
    try:
        _write_whole(stream, text)
    except UnicodeEncodeError:  # (nothing was written: the whole text is encoded first)
        if is_json:
            import json

            text = _NOT_ASCII.sub(lambda m: json.dumps(m.group())[1:-1], text)  # (\\uXXXX, pairs past U+FFFF)
        else:  # (`\xe9` could be the file's own four characters: a script must know)
            _print_error(tr(lang or detect_lang(), "cli.output_escaped", encoding=stream.encoding))
        _write_whole(stream, text.encode(stream.encoding, "backslashreplace").decode(stream.encoding))


def _write_whole(stream, text):
    """Write `text` whole or raise: a write into a pipe closed midway (`| head`) takes part of a
    large text and returns that count (io's BufferedWriter); a text stream drops the rest without
    a word, so it is written as bytes until none is left, and the broken pipe raises. (Windows:
    as text, for its line endings.)"""
    buffer = getattr(stream, "buffer", None)
    if buffer is None or os.name == "nt":
        stream.write(text)
        return
    stream.flush()  # (what the text layer holds goes first; _send_whole flushes the rest: a full
    # disk behind `> out.txt` is said while it can still be said)
    _send_whole(buffer, text.encode(stream.encoding, stream.errors))


_NOT_ASCII = _LazyPattern(r"[^\x00-\x7f]")


def print_result(lang, tool, result, output):
    """JSON, or text: a summary line, the content or diff, problems found, then warnings."""
    if output == "json":
        _print(dumps_strict(result, indent=2), is_json=True)
        return
    lines = [_summary_line(lang, tool, result)]
    for member in ("content", "diff"):
        if result.get(member):
            lines.append(result[member])
    for entry in result.get("files", ()):
        if entry.get("diff"):
            lines.append(entry["diff"])
        if entry.get("balance") not in (None, tr(lang, "b.ok")):
            lines.append(f"{entry['file']}: {entry['balance']}")
    lines += _balance_lines(result)
    if result.get("reason"):
        lines.append(result["reason"])
    lines += [tr(lang, "cli.warning", text=w) for w in result.get("warnings", [])]
    _print("\n".join(lines), lang=lang)


def _balance_lines(result):
    """balance's unmatched symbols and (with --verbose) its pairs, one line each."""
    lines = [f"{u['line']}:{u['column']}: {u['problem']} {u['symbol']}" for u in result.get("unmatched", [])]
    return lines + [
        f"{p['start_line']}:{p['start_column']}-{p['end_line']}:{p['end_column']}: {p['open']} {p['close']}"
        for p in result.get("pairs", [])
    ]


def _summary_line(lang, tool, result):
    """The tool's summary message (Tool.cli_summary) filled from the result."""
    key, verb, *verb_created = tool.cli_summary
    fields = dict(result)
    fields.update(count_files=len(result.get("files", ())), count_items=len(result.get("items", ())))
    fields.setdefault("balance", tr(lang, "cli.balance_skipped"))  # (--brief: no check was made)
    fields.setdefault("added", 0)
    fields["language"] = result.get("language") or "-"
    fields["what"] = result.get("tag") or " ".join(str(result.get(k, "")) for k in ("kind", "name")).strip()
    fields["event"] = tr(lang, "cli.event", event_id=result["event_id"]) if result.get("event_id") else ""
    verb = _summary_verb(verb, verb_created, result)
    fields["verb"] = tr(lang, verb) if verb else ""
    return tr(lang, key, **fields)


def _summary_verb(verb, verb_created, result):
    """The key of the summary's verb: a preview's, no change's, a created file's or the tool's."""
    if result.get("preview"):
        return "cli.verb.preview"
    if verb and result.get("changed") is False:
        return "cli.verb.unchanged"
    return verb_created[0] if verb_created and result.get("created") else verb


def _stdout_to_devnull():
    """Descriptor 1 onto /dev/null, so what is still buffered for stdout is not flushed into a
    descriptor that failed at exit (Python would then exit 120)."""
    with _suppress_os():
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)


def print_error(lang, error, output):
    """The error as JSON on stdout (`-o json`), or as text on stderr; JSON that stdout cannot take
    (closed, a full disk) goes to stderr as text instead."""
    if output == "json":
        try:
            _print(dumps_strict({"error": error}, indent=2), is_json=True)
            return
        except OSError:
            _stdout_to_devnull()
    _print_error(tr(lang, "cli.error", code=error["code"], message=error["message"]))
    warnings = "".join("\n" + tr(lang, "cli.warning", text=w) for w in error.get("warnings", ()))
    _print_error(tr(lang, "cli.hint", hint=error["hint"]) + error_details(error, lang) + warnings)


def run_cli(ctx, tool, args, output):
    """Run one CLI command; returns the exit status (0 ok, 1 failed, 2 usage)."""
    try:
        result = call_tool(ctx, tool, args)
    except ToolError as exc:
        # (edit's items are JSON objects: their errors name JSON keys, as the server's do; but
        # `force` is no item key: the command's --force)
        names = dict(tool_names(prefix=False), force="--force") if tool.name == "edit" else None
        _named_by_option(tool, exc)
        error = exc.to_dict(ctx.lang, names)
        cut = [tr(ctx.lang, key, **fields) for key, fields in _places_cut(error)]
        print_error(
            ctx.lang, dict(error, warnings=[*error.get("warnings", ()), *cut]) if cut else error, output
        )
        return 2 if exc.code == "INVALID_ARGUMENT" else 1
    except MemoryError:
        print_error(ctx.lang, _out_of_memory(tool.cli).to_dict(ctx.lang), output)
        return 1
    except Exception as exc:  # never a traceback for the user
        if os.environ.get("BETTER_EDIT_DEBUG"):
            raise
        error = ToolError("INTERNAL", "internal", detail=f"{type(exc).__name__}: {exc}").to_dict(ctx.lang)
        print_error(ctx.lang, error, output)
        return 1
    status = _show_result(ctx, tool, result, output)
    _result_is_out()
    return status


def _named_by_option(tool, exc):
    """An argument an error names by its JSON name (`start`, `target.value`, `edits`) named by the
    option that gave it (`--start`, `--target`, `--edits-file`)."""
    name = exc.fields.get("name")
    if not isinstance(name, str):
        return
    options = {"edits": "--edits-file"}  # (the array came from --edits-file)
    for param in tool.params:
        long = [flag for flag in param.flags if flag.startswith("--")]
        if long:
            options[param.name] = long[0]
        options.update((also[0], also[1]) for also in param.cli_also if also[0] != "file")  # (--occurrence)
    exc.fields["name"] = options.get(name.split(".")[0], name)


def _show_result(ctx, tool, result, output):
    """Print a result; the exit status when stdout cannot take it (docs/cli.md#exit-status)."""
    try:
        print_result(ctx.lang, tool, result, output)
        if sys.stdout is not None:
            sys.stdout.flush()
    except (BrokenPipeError, ValueError) as exc:
        if isinstance(exc, ValueError) and "closed file" not in str(exc):
            raise
        return _output_lost(tool)
    except OSError as exc:  # (a full disk behind `> out.txt`, /dev/full, an I/O error)
        key = "cli.output_failed" if tool.read_only else "cli.output_failed_edit"
        _print_error(tr(ctx.lang, key, detail=exc.strerror or str(exc)))
        _stdout_to_devnull()
        return 1 if tool.read_only else 0
    return 0


def _output_lost(tool):
    """stdout is closed or a broken pipe (docs/cli.md#exit-status). An edit happened: exit 0, or a
    script would retry and apply it twice. A read ends as `head` expects: by SIGPIPE, quietly."""
    _stdout_to_devnull()  # nothing is flushed into the broken pipe at exit
    _say_unsent("the output was closed")
    if tool.read_only and os.name != "nt":
        import signal

        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
    return 0 if not tool.read_only else 141


# ====================================================================================================
# 12. main(): pick the mode
# ====================================================================================================


def _read_argv(argv):
    """(the --lang value if valid, the index of the command or None, the -o value or None) from one
    pass over `argv`, before argparse (which needs them: the language of its words, which command's
    parser to build, and whether its usage errors are JSON). The command is the first argument that
    is not a flag or a global flag's value; there is none after `--`. --lang and -o count before
    or after the command; -o as `-o json`, `-ojson`, `-o=json`, `--output json`, `--output=json`
    (not abbreviated: `--out json` is read by argparse alone, and its usage errors stay text)."""
    lang, skip, command, output = None, None, None, None
    for index, arg in enumerate(argv):
        if _value_of(skip, arg):  # (the value of the flag before)
            lang = arg if skip == "--lang" and arg in ("en", "zh") else lang
            output = arg if skip in _OUTPUT_FLAGS else output
            skip = None
        elif arg == "--":
            break
        elif arg.startswith("-"):
            lang, skip = _flag_seen(arg, lang)
            output = _output_joined(arg, output)
        else:
            command = index if command is None else command
            skip = None  # (-o had no value: this word was no value of it)
    return lang, command, output


_OUTPUT_FLAGS = ("-o", "--output")  # (every command has it: `-o json read` is read's, as `-ojson read`)


def _value_of(flag, arg):
    """Whether `arg` is the value of `flag`, the flag before it that takes one (None: no such
    flag); not a flag or a command after -o (-o without its value: argparse says so)."""
    if flag in _OUTPUT_FLAGS:
        return not (arg.startswith("-") or arg in _command_words())
    return flag is not None


def _command_words():
    return [tool.cli for tool in TOOLS if tool.cli]


def _output_joined(arg, output):
    """The -o value a flag holds itself (`-ojson`, `-o=json`, `--output=json`), else `output`."""
    name, equals, value = arg.partition("=")
    if name in _OUTPUT_FLAGS and equals:
        return value
    if arg.startswith("-o") and arg[2:3] not in ("", "="):
        return arg[2:]
    return output


def _flag_seen(arg, lang):
    """(the language `--lang=VALUE` names, else `lang`; the flag if its value comes next, else None)."""
    name, _, value = arg.partition("=")
    if name == "--lang" and value in ("en", "zh"):
        lang = value
    return lang, arg if arg in _GLOBAL_VALUE_FLAGS or arg in _OUTPUT_FLAGS else None


def _bad_setting(lang, name, value, why, **fields):
    """The usage error of an option or environment variable `name` whose `value` is wrong: `why`,
    a message key, says how."""
    return UsageError(tr(lang, "cli.bad_env", name=name, value=value, why=tr(lang, why, **fields)))


def _env_int(lang, environ, name, minimum):
    value = environ.get(name)
    if value in (None, ""):
        return None
    if not re.fullmatch(r"\s*[0-9]{1,15}\s*", value) or int(value) < minimum:
        raise _bad_setting(lang, name, value, "cli.why_int", minimum=minimum)
    return int(value)


def make_context(lang, ns, environ, mcp):
    """The Context from flags (which win) and BETTER_EDIT_* variables (docs/cli.md#global-options-and-environment)."""
    if getattr(ns, "max_chips", None) is not None:
        max_chips = _env_int(lang, {"--max-chips": ns.max_chips}, "--max-chips", 1)
    else:
        max_chips = _env_int(lang, environ, "BETTER_EDIT_MAX_CHIPS", 1)
    persist = _persist_option(lang, environ)
    lock_wait = _env_int(lang, environ, "BETTER_EDIT_LOCK_WAIT", 0)
    encoding = _encoding_option(lang, ns, environ, mcp)
    cwd = _current_folder(lang)
    return Context(
        lang=lang,
        cwd=cwd,
        root=_root_option(lang, ns, environ, mcp, cwd),
        encoding=encoding,
        max_chips=max_chips or DEFAULT_MAX_CHIPS,
        chip_ttl=_env_int(lang, environ, "BETTER_EDIT_CHIP_TTL", 0) or 0,
        max_snapshots=_env_int(lang, environ, "BETTER_EDIT_MAX_SNAPSHOTS", 1) or DEFAULT_MAX_SNAPSHOTS,
        persist_snapshots=persist,
        cache_dir=_cache_dir_option(lang, environ),
        workspace=environ.get("BETTER_EDIT_WORKSPACE") or None,
        mcp=mcp,
        lock_wait=LOCK_WAIT_SECONDS if lock_wait is None else lock_wait,
    )


def _cache_dir_option(lang, environ):
    """BETTER_EDIT_CACHE_DIR with `~` expanded (a host's JSON configuration runs no shell), or None.
    A relative path is a usage error: the store would move with the working folder, so a
    rollback from another folder could not see an edit, and it would land inside the project."""
    value = environ.get("BETTER_EDIT_CACHE_DIR") or None
    if value is None:
        return None
    path = os.path.expanduser(value)
    if not os.path.isabs(path):
        raise _bad_setting(lang, "BETTER_EDIT_CACHE_DIR", value, "cli.why_relative")
    return path


def _current_folder(lang):
    """The working folder; a usage error when it was removed since the program was started in it
    (os.getcwd() fails: a traceback before)."""
    try:
        return os.getcwd()
    except OSError:
        raise UsageError(tr(lang, "cli.no_cwd")) from None


def _root_option(lang, ns, environ, mcp, cwd):
    """--root, else BETTER_EDIT_ROOT, else for the server its working folder: a folder, or None.
    An empty --root (`--root "$UNSET"`) is a usage error: taken for no root, it confined nothing."""
    if getattr(ns, "root", None) == "":
        raise _bad_setting(lang, "--root", "", "cli.why_empty_root")
    name = "--root" if getattr(ns, "root", None) else "BETTER_EDIT_ROOT"
    root = getattr(ns, "root", None) or environ.get("BETTER_EDIT_ROOT") or (cwd if mcp else None)
    if root and not os.path.isdir(root):
        raise _bad_setting(lang, name, root, "cli.why_not_dir")
    return root


def _persist_option(lang, environ):
    """BETTER_EDIT_SNAPSHOT_PERSIST as a bool (true unless it says false, 0, no or off)."""
    persist = environ.get("BETTER_EDIT_SNAPSHOT_PERSIST", "true").strip().lower()
    if persist not in ("true", "false", "1", "0", "yes", "no", "on", "off", ""):
        raise _bad_setting(lang, "BETTER_EDIT_SNAPSHOT_PERSIST", persist, "cli.why_bool")
    return persist not in ("false", "0", "no", "off")


def _encoding_option(lang, ns, environ, mcp):
    """--encoding, else BETTER_EDIT_ENCODING: a codec Python knows, or a usage error (the CLI
    reports a non-text codec as the tool's error)."""
    encoding = getattr(ns, "encoding", None) or environ.get("BETTER_EDIT_ENCODING") or None
    if encoding:
        try:
            _lookup_codec(encoding)
        except ToolError as exc:
            from_env = not getattr(ns, "encoding", None)
            if mcp or from_env or exc.code != "INVALID_ARGUMENT":
                why = tr(lang, exc.key, encoding=encoding)
                if from_env:  # (say where it came from: no argument named it)
                    why = tr(lang, "cli.bad_env", name="BETTER_EDIT_ENCODING", value=encoding, why=why)
                raise UsageError(why) from None
    return encoding


def main(argv=None):
    """The program: a CLI command, or with none the MCP server. Run as the program (no `argv`), a CLI
    command ends the process itself once its output is out (_exit_now)."""
    program = argv is None
    if program:
        _die_with_the_launcher()
    argv = sys.argv[1:] if argv is None else list(argv)
    lang_flag, position, output = _read_argv(argv)
    lang = detect_lang(lang_flag)
    if position is None and argv not in (["-V"], ["--version"]):
        return _main_server(lang, argv, output)
    status = _main_command(lang, argv, position, output)
    if program:
        _exit_now(status)
    return status


def _die_with_the_launcher():
    """The one-file executable runs as two processes (docs/install.md): its launcher, the process a
    caller started and may kill, which unpacks the program, and this one. A SIGKILL of the
    launcher left this one editing on its own, and a caller that then retried made the edit
    twice. On Linux, this process is now killed with its launcher (PR_SET_PDEATHSIG), as the
    module run by Python is: the next call's recovery undoes what it left."""
    if not getattr(sys, "frozen", False) or not sys.platform.startswith("linux"):
        return
    try:  # (only when the parent is the launcher: the same executable)
        launcher = os.getppid()
        if os.readlink(f"/proc/{launcher}/exe") != os.readlink("/proc/self/exe"):
            return
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError, ImportError):
        return
    if os.getppid() != launcher:  # (it died between the look and the call: die as it would have made us)
        os.kill(os.getpid(), 9)


def _main_server(lang, argv, output):
    """No command: the MCP server (or --dump-tools)."""
    if output is not None:  # (-o json alone: the server has no -o, and "json" is no command)
        return _usage_failed(lang, f"{PROGRAM}: " + tr(lang, "cli.output_alone"), PROGRAM, output)
    ns = build_parser(lang).parse_args(argv) if argv else None  # (exits 2 on a usage error)
    try:
        ctx = make_context(lang, ns, os.environ, mcp=True)
    except UsageError as exc:
        _print_error(f"{PROGRAM}: {exc}")
        return 2
    if ns is not None and ns.dump_tools:
        return dump_tools(ctx, ns.dump_tools)
    if sys.stdin is None or sys.stdout is None:  # started with <&- or >&-: nothing to speak on
        _print_error(f"{PROGRAM}: " + tr(lang, "mcp.no_stdio"))
        return 2
    return serve_stdio(ctx, ns)


def _print_version():
    """What argparse's version action prints, without the parser; exit status 0."""
    try:
        _print(__version__, sys.stdout)
    except (OSError, AttributeError):
        pass  # (as argparse: a closed output is no error here)
    return 0


def _command_tool(lang, argv, position, output):
    """The tool of the command at `position` (the tool table is the list of commands); None, said,
    if none: a command's option put before it (`-o json read`) took its value for the command."""
    word = argv[position]
    for tool in TOOLS:
        if tool.cli and tool.cli == word:
            return tool
    _usage_failed(lang, f"{PROGRAM}: " + _no_command(lang, argv, position), PROGRAM, output)
    return None


def _no_command(lang, argv, position):
    """What to say of a word that is no command: a command's option put before the command
    (`-f a.txt read`) took that word as its value; else the commands there are, and the one
    most like it (`raed`: read)."""
    names = _command_words()
    command = next((arg for arg in argv[position + 1 :] if arg in names), None)
    if command and position and argv[position - 1].startswith("-"):
        return tr(lang, "cli.option_first", option=argv[position - 1], word=argv[position], command=command)
    word = argv[position]
    if word.lower() in ("undo", "rollback", "revert"):
        rollback = tool_names(prefix=True)["trx_rollback"]  # (as a server with no naming flag lists it)
        return tr(lang, "cli.bad_command_undo", word=word, commands=", ".join(names), rollback=rollback)
    near = _command_meant(word, names)
    if near:
        return tr(lang, "cli.bad_command_near", word=word, near=near, commands=", ".join(names))
    return tr(lang, "cli.bad_command", word=word, commands=", ".join(names))


def _command_meant(word, names):
    """The command (with its options) a word that is none most likely meant: another tool's
    (`cat`: read), one a letter or two off (`raed`), or `read FILE` for a file's name; or None."""
    import difflib

    near = _COMMAND_GUESSES.get(word.lower()) or difflib.get_close_matches(word, names, 1)
    if not near and os.path.isfile(word):  # (`better-edit-tools app.py`: the file, with no command)
        near = [f"read {word}"]
    return near[0] if near else None


# Commands of other tools that newcomers type, and ours that do that.
_COMMAND_GUESSES = {
    "cat": ["read"], "show": ["read"], "view": ["read"], "apply": ["patch"], "check": ["balance"],
    "brackets": ["balance"], "append": ["insert --after-line -1"], "prepend": ["insert --after-line 0"],
    "add": ["insert"], "rm": ["delete"], "remove": ["delete"], "create": ["write"], "sub": ["replace"],
    "function": ["func-range"], "func": ["func-range"], "tag": ["tag-range"], "diff": ["patch"],
}  # fmt: skip


def _main_command(lang, argv, position, output):
    """One CLI command (or --version); its exit status."""
    if position is None:
        return _print_version()
    word = argv[position]
    tool = _command_tool(lang, argv, position, output)
    if tool is None:
        return 2
    file_word = _file_word(argv, position)
    rest = argv[:position] + argv[position + (1 if file_word is None else 2) :]
    parser = _command_parser(lang, tool, output, file_word is not None)
    parser.argv = rest  # (for its error hints)
    try:
        _check_dashes(lang, rest, parser.options)
    except UsageError as exc:
        return _usage_failed(lang, f"{PROGRAM} {word}: {exc}", parser.prog, output)
    ns = parser.parse_args(rest)  # (exits 2, or 0)
    try:
        ctx = make_context(lang, ns, os.environ, mcp=False)
    except UsageError as exc:
        return _usage_failed(lang, f"{PROGRAM}: {exc}", parser.prog, ns.output)
    try:
        _take_word(lang, tool, ns, file_word)
        args = cli_arguments(lang, tool, ns)
    except UsageError as exc:
        return _usage_failed(lang, f"{PROGRAM} {word}: {exc}", parser.prog, ns.output)
    except ToolError as exc:
        print_error(lang, exc.to_dict(lang), ns.output)
        return 2 if exc.code == "INVALID_ARGUMENT" else 1
    return run_cli(ctx, tool, args, ns.output)


def _usage_failed(lang, message, prog, output, hint=None, usage=None):
    """Exit status 2 for a usage error: `message` on stderr, or with `output` "json" the error
    as JSON on stdout, as every other error of a `-o json` command (docs/cli.md#exit-status)."""
    if output != "json":
        _print_error(message)
        return 2
    error = {
        "code": "INVALID_ARGUMENT",
        "message": message,
        "hint": hint or tr(lang, "cli.usage_hint", prog=prog),
    }
    print_error(lang, error if usage is None else dict(error, usage=usage), output)
    return 2


def _exit_now(status):
    """End a CLI run without the interpreter's teardown, which frees every module and object the
    process is about to lose anyway: about 2.5 ms of a 17 ms `read` measured here. Everything an
    edit wrote is on disk (fsynced) and its locks go with the process; the output is flushed
    first (a flush that fails changes nothing: the status already says what happened)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def serve_stdio(ctx, ns):
    import signal

    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file-size limit is an IO error, not a crash
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout carries protocol messages only
    for fd in (0, 1):  # (a launcher may hand over a non-blocking pipe: a read that would wait was EOF)
        with _suppress_os():
            os.set_blocking(fd, True)
    if _is_terminal(
        sys.stdin
    ):  # a person started it: say what it is waiting for (never when stdin is a pipe)
        _print_error(tr(ctx.lang, "mcp.tty_notice", program=PROGRAM))
    server = Server(ctx, prefix=not (ns and ns.no_prefix), underscore=bool(ns and ns.underscore_names))
    _guard_signals()  # Ctrl-C or a host stopping the server: die by the signal, quietly
    try:  # a commit a killed process left is undone as the server starts; the first result says so
        ctx.recovered = recover_interrupted(ctx)
    except (OSError, ToolError):
        pass  # (the first call tries again)
    try:
        return server.serve(sys.stdin.buffer, stdout)
    except (OSError, KeyboardInterrupt):  # the client (or the terminal) went away: as EOF
        return 0


def dump_tools(ctx, form):
    import json

    server = Server(ctx)
    tools = server.tool_list(full=form != "json")
    if form == "json":
        _print(json.dumps(tools, ensure_ascii=False, indent=2), is_json=True)
    else:
        _print(tools_markdown(ctx.lang, tools))
    return 0


def _schema_kind(schema):
    """An argument's type as the docs' table shows it: its JSON type(s), or its choices."""
    if "enum" not in schema:
        return " or ".join(s["type"] for s in schema.get("anyOf", [schema]))
    kind = type(schema["enum"][0]).__name__.replace("str", "string")
    return kind + " (" + " / ".join(map(str, schema["enum"])) + ")"


def tools_markdown(lang, tools):
    """docs/mcp.md body, generated from the tool table."""
    out = []
    for entry in tools:
        out += [f"## `{entry['name']}` — {entry['title']}", "", entry["description"], ""]
        hints = entry["annotations"]
        flags = [k for k in ("readOnlyHint", "destructiveHint", "idempotentHint") if hints.get(k)]
        out += [f"Annotations: {', '.join(flags) or 'none'}.", ""]
        props = entry["inputSchema"]["properties"]
        if props:
            out += ["| argument | type | required | meaning |", "|---|---|---|---|"]
            required = set(entry["inputSchema"]["required"])
            for name, schema in props.items():
                meaning = schema["description"].replace("|", "\\|")
                out.append(
                    f"| `{name}` | {_schema_kind(schema)} | {'yes' if name in required else 'no'} | {meaning} |"
                )
            out.append("")
        result = ", ".join(f"`{k}`" for k in entry["outputSchema"]["properties"])
        out += [f"Result members: {result}.", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
