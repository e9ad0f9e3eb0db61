#!/bin/sh
# install.sh — install the better-edit-tools executable (docs/install.md).
#
#   sh install.sh            # the latest release
#   sh install.sh v0.2.0     # that release ("0.2.0" works too)
#
# What it does, in order: detect OS and CPU, download the release asset and checksums.txt, check
# the asset's SHA-256, unpack it, check that the program runs, and move it over any older copy in
# one rename. It prints the absolute path and an MCP client snippet. It never edits any client's
# configuration: that is yours (or your agent's) to do.
#
# Environment:
#   BETTER_EDIT_INSTALL_DIR   where the executable goes (default ~/.local/share/better-edit-tools/bin)
#   BETTER_EDIT_RELEASE_BASE  release base URL (default: the project's GitHub releases); a mirror
#                             must follow GitHub's layout: BASE/download/vVERSION/ASSET and
#                             BASE/latest/download/ASSET
#   BETTER_EDIT_OS, BETTER_EDIT_ARCH
#                             override what `uname -s` / `uname -m` report
#   BETTER_EDIT_DOWNLOADER    curl or wget (default: curl if found, else wget)
#   BETTER_EDIT_STALL_TIMEOUT seconds a download may go at less than 1 KB/s before it is given
#                             up on (default 60)
#
# How "latest" is found: checksums.txt has the same name in every release, so the script fetches
# BASE/latest/download/checksums.txt and takes the version from the one asset name in it that
# matches this OS and CPU (better-edit-tools_VERSION_OS_ARCH.tar.gz). Then it downloads
# BASE/latest/download/<that name>.
#
# Exit status: 0 installed; 1 failed (nothing installed, an existing copy left as it was);
# 2 usage error or unsupported platform.

set -eu

PROGRAM=better-edit-tools
DEFAULT_RELEASE_BASE=https://github.com/better-edit-tools/better-edit-tools/releases

say() { printf '%s\n' "$@"; }
warn() { printf 'install.sh: %s\n' "$*" >&2; }
die() { warn "error: $*"; exit 1; }
usage_error() { warn "error: $*"; exit 2; }

usage() {
    cat <<EOF
usage: install.sh [VERSION]

Install $PROGRAM from its GitHub release (latest when VERSION is omitted;
"v0.2.0" and "0.2.0" name the same release).

Environment: BETTER_EDIT_INSTALL_DIR (default ~/.local/share/$PROGRAM/bin),
BETTER_EDIT_RELEASE_BASE (a mirror of the releases), BETTER_EDIT_OS / BETTER_EDIT_ARCH,
BETTER_EDIT_DOWNLOADER (curl or wget), BETTER_EDIT_STALL_TIMEOUT (seconds below
1 KB/s before a download is given up on, default 60).
EOF
}

# ---- arguments ---------------------------------------------------------------------------------

parse_version() {
    # Prints the bare version ("" for latest) or exits with a usage error.
    case "${1-}" in
        "" | latest) printf '' ;;
        v[0-9]* | [0-9]*)
            version=${1#v}
            case "$version" in
                *[!0-9A-Za-z.+-]* | *..* | .* | *.) usage_error "not a version: '$1' (expected e.g. v0.2.0)" ;;
            esac
            printf '%s' "$version"
            ;;
        *) usage_error "not a version: '$1' (expected e.g. v0.2.0 or 0.2.0)" ;;
    esac
}

# ---- platform ----------------------------------------------------------------------------------

detect_os() {
    raw=${BETTER_EDIT_OS:-$(uname -s)}
    case "$raw" in
        Linux | linux) printf linux ;;
        Darwin | darwin | macOS | macos) printf darwin ;;
        MINGW* | MSYS* | CYGWIN* | Windows* | windows)
            usage_error "install.sh supports Linux and macOS only. On Windows, download
  ${PROGRAM}_VERSION_windows_amd64.zip (or _arm64.zip) from $RELEASE_BASE,
  unzip ${PROGRAM}.exe into a folder of your choice and use its full path (see docs/install.md)." ;;
        *) usage_error "unsupported operating system '$raw': release builds exist for Linux, macOS and Windows.
  Other systems can use 'pipx install better-edit-tools' (see docs/install.md)." ;;
    esac
}

detect_arch() {
    os=$1
    raw=${BETTER_EDIT_ARCH:-$(uname -m)}
    case "$raw" in
        x86_64 | amd64 | x64)
            # A shell running under Rosetta on Apple silicon reports x86_64; prefer the native build.
            if [ -z "${BETTER_EDIT_ARCH:-}" ] && [ "$os" = darwin ] &&
                [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
                printf arm64
            else
                printf amd64
            fi
            ;;
        aarch64 | arm64 | armv8*) printf arm64 ;;
        *) usage_error "unsupported CPU architecture '$raw': release builds exist for x86_64 (amd64) and aarch64 (arm64).
  Other CPUs can use 'pipx install better-edit-tools' (see docs/install.md)." ;;
    esac
}

# ---- tools -------------------------------------------------------------------------------------

have() { command -v "$1" >/dev/null 2>&1; }

pick_downloader() {
    case "${BETTER_EDIT_DOWNLOADER:-}" in
        "") ;;
        curl | wget)
            have "$BETTER_EDIT_DOWNLOADER" || die "BETTER_EDIT_DOWNLOADER=$BETTER_EDIT_DOWNLOADER, but it was not found: install it, or unset BETTER_EDIT_DOWNLOADER, and run install.sh again"
            printf '%s' "$BETTER_EDIT_DOWNLOADER"
            return ;;
        *) usage_error "BETTER_EDIT_DOWNLOADER must be curl or wget, not '$BETTER_EDIT_DOWNLOADER'" ;;
    esac
    if have curl; then
        printf curl
    elif have wget; then
        printf wget
    else
        die "neither curl nor wget was found; install one of them and run install.sh again"
    fi
}

# download URL FILE: fails (non-zero) on HTTP errors, refused connections, cut-off bodies and a
# server that sends less than 1 KB/s for $stall seconds (BETTER_EDIT_STALL_TIMEOUT, default 60;
# curl: retries included); what the downloader said is kept in $work/why for the error.
# Neither reads the user's ~/.curlrc or ~/.wgetrc (one that turns TLS checks off would apply).
download() {
    fetch_status=0
    case "$DOWNLOADER" in
        curl) curl -q --fail --silent --show-error --location --proto '=https,http' --retry 2 \
            --retry-max-time "$stall" --connect-timeout 20 --speed-limit 1024 --speed-time "$stall" \
            --output "$2" "$1" 2>"$work/why" || fetch_status=$? ;;
        wget)
            no_config=""
            if wget --help 2>&1 | grep -q -- '--no-config'; then no_config=--no-config; fi
            # (wget's --timeout only notices silence: a server that sends a byte every few seconds
            # would hold it forever, so a watchdog stops it below 1 KB/s, as curl's --speed-limit)
            rm -f "$work/stalled"
            wget $no_config --no-verbose --tries=1 --timeout="$stall" --output-document="$2" "$1" \
                2>"$work/why" &
            fetch_pid=$!
            watch_download "$fetch_pid" "$2" >/dev/null 2>&1 &
            watch_pid=$!
            wait "$fetch_pid" 2>/dev/null || fetch_status=$?  # (dash says "Terminated" for a job killed)
            fetch_pid=""
            kill "$watch_pid" 2>/dev/null || true
            wait "$watch_pid" 2>/dev/null || true
            watch_pid=""
            if [ -e "$work/stalled" ]; then
                printf '%s\n' "stopped: the server sent less than 1 KB a second for $stall seconds" >>"$work/why"
            fi ;;
    esac
    return "$fetch_status"
}

# watch_download PID FILE: stops the download PID when FILE grew by less than 1 KB a second over
# the last $stall seconds, leaving $work/stalled behind. (Runs in the background.)
watch_download() {
    window_size=0
    waited=0
    while kill -0 "$1" 2>/dev/null; do
        sleep 1
        waited=$((waited + 1))
        [ "$waited" -ge "$stall" ] || continue
        size=$(wc -c 2>/dev/null <"$2" | tr -d ' \t')
        size=${size:-0}
        if [ $((size - window_size)) -lt $((1024 * stall)) ]; then
            : >"$work/stalled"
            kill "$1" 2>/dev/null
            return 0
        fi
        window_size=$size
        waited=0
    done
}

# indented FALLBACK: the last 3 non-blank lines of stdin, each indented by two spaces, or
# FALLBACK indented when there are none (an error message never shows an empty line).
indented() {
    lines=$(sed -e '/^[[:space:]]*$/d' -e 's/^/  /' | tail -n 3)
    if [ -n "$lines" ]; then printf '%s\n' "$lines"; else printf '  %s\n' "$1"; fi
}

# why: what the downloader said about its failure, indented; when it said nothing (wget, for a
# download cut off), its exit status and what that means.
why() {
    case "$DOWNLOADER:$fetch_status" in
        wget:3) meaning=": the file could not be written" ;;
        wget:4) meaning=": network failure (no connection, or it was cut off)" ;;
        wget:5) meaning=": the TLS certificate or handshake failed" ;;
        wget:8) meaning=": the server answered with an error" ;;
        *) meaning="" ;;
    esac
    indented "$DOWNLOADER said nothing more; it stopped with exit status $fetch_status$meaning" <"$work/why"
}

sha256_of() {
    # (read from stdin: a name with a backslash makes sha256sum put a \ before the hash)
    if have sha256sum; then
        sha256sum <"$1" | awk '{print $1}'
    elif have shasum; then
        shasum -a 256 <"$1" | awk '{print $1}'
    elif have openssl; then
        openssl dgst -sha256 <"$1" | awk '{print $NF}'
    else
        die "no SHA-256 tool found (sha256sum, shasum or openssl), so the download cannot be verified: install one of them and run install.sh again"
    fi
}

# ---- release metadata --------------------------------------------------------------------------

# checksum_for NAME FILE: the hash recorded for NAME in a sha256sum-style file ("HASH  NAME",
# "HASH *NAME", "HASH  ./NAME") or a BSD-style one ("SHA256 (NAME) = HASH"), or nothing.
checksum_for() {
    awk -v name="$1" '{ sub(/\r$/, "") } NR == 1 { sub(/^\357\273\277/, "") }
        $1 == "SHA256" && $2 == ("(" name ")") && $3 == "=" { print tolower($4); exit }
        { listed = $2; sub(/^\*/, "", listed); sub(/^\.\//, "", listed) }
        NF == 2 && listed == name { print tolower($1); exit }' "$2"
}

# is_checksum_list FILE: whether FILE holds at least one checksum line (not an error page).
is_checksum_list() {
    awk '{ sub(/\r$/, "") } NR == 1 { sub(/^\357\273\277/, "") }
        $1 ~ /^[0-9A-Fa-f]+$/ && length($1) == 64 && NF == 2 { found = 1 }
        $1 == "SHA256" && $3 == "=" && length($4) == 64 && NF == 4 { found = 1 } END { exit !found }' "$1"
}

# latest_asset_name OS ARCH FILE: the one asset name in checksums.txt built for OS/ARCH.
latest_asset_name() {
    awk -v suffix="_$1_$2.tar.gz" -v prefix="${PROGRAM}_" '
        { sub(/\r$/, ""); name = $2; sub(/^\*/, "", name); sub(/^\.\//, "", name) }
        $1 == "SHA256" && $3 == "=" { name = $2; sub(/^\(/, "", name); sub(/\)$/, "", name) }
        substr(name, 1, length(prefix)) == prefix &&
        length(name) > length(prefix suffix) &&
        substr(name, length(name) - length(suffix) + 1) == suffix { print name; exit }' "$3"
}

# version_of_asset NAME: better-edit-tools_0.2.0_linux_amd64.tar.gz -> 0.2.0
version_of_asset() {
    v=${1#"${PROGRAM}_"}
    v=${v%.tar.gz}
    v=${v%_*}
    printf '%s' "${v%_*}"
}

# ---- output ------------------------------------------------------------------------------------

wants_chinese() {
    # The first set of LC_ALL, LC_MESSAGES, LANG that names a language (docs/install.md): the C
    # locale names none (containers set LC_ALL=C.UTF-8), so a Chinese LANG asks for Chinese even
    # there, where the program itself (docs/cli.md) would take C for English; `--lang zh` decides.
    for value in "${LC_ALL:-}" "${LC_MESSAGES:-}" "${LANG:-}"; do
        case "$value" in "" | C | C.* | POSIX) continue ;; [Zz][Hh]*) return 0 ;; *) return 1 ;; esac
    done
    return 1
}

sh_quote() {
    printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

json_string() {
    # (a backslash, a quote, a line break and every other control character of a folder name is
    # escaped: JSON takes none of them as it is; the backslashes awk writes are made with %c, as
    # awks differ in how they read them in strings)
    printf '"%s"' "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' | awk '
        BEGIN { ORS = ""; for (i = 1; i < 32; i++) esc[sprintf("%c", i)] = sprintf("%cu%04x", 92, i) }
        { out = ""; for (k = 1; k <= length($0); k++) { c = substr($0, k, 1); out = out ((c in esc) ? esc[c] : c) }
          if (NR > 1) printf "%cn", 92
          print out }')"
}

print_snippet() {
    if wants_chinese; then args='["--lang", "zh"]'; else args='[]'; fi
    cat <<EOF
{
  "mcpServers": {
    "better-edit-tools": {
      "command": $(json_string "$1"),
      "args": $args
    }
  }
}
EOF
}

# ---- main --------------------------------------------------------------------------------------

main() {
    case "${1-}" in
        -h | --help) usage; exit 0 ;;
    esac
    [ "$#" -le 1 ] || usage_error "too many arguments: expected at most one VERSION"

    RELEASE_BASE=${BETTER_EDIT_RELEASE_BASE:-$DEFAULT_RELEASE_BASE}
    RELEASE_BASE=${RELEASE_BASE%/}
    case "$RELEASE_BASE" in
        https://* | http://*) ;;  # (without one, curl and wget take http:// and say nothing)
        *) usage_error "BETTER_EDIT_RELEASE_BASE must start with https:// (or http:// for a mirror you trust): '$RELEASE_BASE'" ;;
    esac
    version=$(parse_version "${1-}")
    os=$(detect_os)
    arch=$(detect_arch "$os")
    DOWNLOADER=$(pick_downloader)
    stall=${BETTER_EDIT_STALL_TIMEOUT:-60}
    case "$stall" in
        "" | *[!0-9]* | 0*) usage_error "BETTER_EDIT_STALL_TIMEOUT must be a whole number of seconds above 0, not '$stall'" ;;
    esac
    if [ -n "${BETTER_EDIT_INSTALL_DIR:-}" ]; then
        install_dir=$BETTER_EDIT_INSTALL_DIR
    elif [ -n "${HOME:-}" ]; then
        install_dir=$HOME/.local/share/$PROGRAM/bin
    else
        usage_error "HOME is not set, so there is no default install folder: set HOME, or set
  BETTER_EDIT_INSTALL_DIR to the folder the program should go to, and run install.sh again."
    fi

    work=$(mktemp -d "${TMPDIR:-/tmp}/better-edit-install.XXXXXX") ||
        die "cannot create a temporary folder in ${TMPDIR:-/tmp}: set TMPDIR to a folder you can write to and run install.sh again"
    staged=""
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    trap 'exit 141' PIPE  # (`install.sh | head`: the download folder goes too)

    if [ -n "$version" ]; then
        asset="${PROGRAM}_${version}_${os}_${arch}.tar.gz"
        release_url="$RELEASE_BASE/download/v$version"
        say "Installing $PROGRAM $version for $os/$arch"
    else
        release_url="$RELEASE_BASE/latest/download"
        say "Installing the latest $PROGRAM for $os/$arch"
    fi

    download "$release_url/checksums.txt" "$work/checksums.txt" ||
        die "could not download $release_url/checksums.txt
  (no such release, or the network failed):
$(why)
  Nothing was installed: check the version and the network, then run install.sh again."
    is_checksum_list "$work/checksums.txt" ||
        die "$release_url/checksums.txt is not a list of SHA-256 checksums (an error page of the
  server or a proxy?). Nothing was installed: check BETTER_EDIT_RELEASE_BASE and any proxy, then
  run install.sh again."

    if [ -z "$version" ]; then
        asset=$(latest_asset_name "$os" "$arch" "$work/checksums.txt")
        [ -n "$asset" ] || die "the latest release has no build for $os/$arch (no ${PROGRAM}_*_${os}_${arch}.tar.gz
  in $release_url/checksums.txt).
  Nothing was installed: name an older release that has one, or use 'pipx install better-edit-tools'
  (see docs/install.md)."
        version=$(version_of_asset "$asset")
    fi

    expected=$(checksum_for "$asset" "$work/checksums.txt")
    [ -n "$expected" ] || die "release $version has no $asset in its checksums.txt
  (no build for $os/$arch?). Nothing was installed: name another release, or use
  'pipx install better-edit-tools' (see docs/install.md)."

    say "Downloading $release_url/$asset"
    download "$release_url/$asset" "$work/$asset" ||
        die "could not download $release_url/$asset
  (missing asset, the download was cut off, or no room for it in ${TMPDIR:-/tmp}):
$(why)
  Nothing was installed: run install.sh again (with TMPDIR set to a folder with room, if it was full)."

    actual=$(sha256_of "$work/$asset")
    [ "$actual" = "$expected" ] || die "checksum mismatch for $asset:
  expected $expected (checksums.txt)
  got      $actual
  The download is corrupt or was tampered with. Nothing was installed: run install.sh again; if
  the mismatch stays, do not install that file by hand, and report it."
    say "SHA-256 matches checksums.txt"

    mkdir "$work/unpacked" ||
        die "cannot create a folder in $work. Nothing was installed: set TMPDIR to a folder you can write to and run install.sh again."
    # (tar reads the archive from stdin and unpacks where it runs: GNU tar takes a backslash
    # sequence in the folder of -C as an escape, so TMPDIR=/tmp/a\bc unpacked nowhere)
    (CDPATH='' cd -- "$work/unpacked" && tar -xzf -) <"$work/$asset" ||
        die "could not unpack $asset (see tar's message above). Nothing was installed: run install.sh
  again (with TMPDIR set to a folder with room, if it was full)."
    [ -f "$work/unpacked/$PROGRAM" ] && [ ! -L "$work/unpacked/$PROGRAM" ] ||
        die "$asset does not hold '$PROGRAM' as a plain file at its top level.
  Nothing was installed: the release is malformed; report it, or use 'pipx install better-edit-tools' (see docs/install.md)."

    mkdir -p "$install_dir" ||
        die "cannot create $install_dir: set BETTER_EDIT_INSTALL_DIR to a folder you can write to and run install.sh again. Nothing was installed."
    # (CDPATH unset: a relative folder is this one; the x keeps a name that ends in a newline)
    resolved=$(CDPATH='' cd -- "$install_dir" && pwd -P && printf x) ||
        die "cannot enter $install_dir: set BETTER_EDIT_INSTALL_DIR to a folder you can write to and run install.sh again. Nothing was installed."
    install_dir=${resolved%?x}
    target="$install_dir/$PROGRAM"
    if [ -d "$target" ] || { [ -e "$target" ] && [ ! -f "$target" ]; }; then
        die "$target is a folder (or no plain file): move it away and run install.sh again.
  Nothing was installed."
    fi

    # Stage beside the target so the final rename stays on one filesystem (atomic replace).
    staged="$install_dir/.$PROGRAM.new.$$"
    cant_write="cannot write to $install_dir: set BETTER_EDIT_INSTALL_DIR to a folder you can write to and run install.sh again. Nothing was installed."
    cp "$work/unpacked/$PROGRAM" "$staged" || die "$cant_write"
    chmod 755 "$staged" || die "$cant_write"
    ran_status=0
    ran=$("$staged" --version 2>&1) || ran_status=$?
    if [ "$ran_status" -ne 0 ]; then
        die "the downloaded program does not run on this machine ('$PROGRAM --version' exited with status $ran_status):
$(printf '%s\n' "$ran" | indented "it printed nothing")
  Nothing was installed: check that this is a $os/$arch machine, or use
  'pipx install better-edit-tools' (see docs/install.md)."
    fi

    previous=""
    if [ -x "$target" ]; then
        previous=$("$target" --version 2>/dev/null || printf 'unknown version')
    fi
    [ "$ran" = "$version" ] || warn "warning: the program reports version '$ran', the release is $version"
    mv -f "$staged" "$target" ||
        die "cannot move the program to $target: check that you can write there and run install.sh again. Nothing was installed."
    staged=""

    if [ -n "$previous" ] && [ "$previous" = "$ran" ]; then
        say "$PROGRAM $ran was already installed; reinstalled it at:"
    elif [ -n "$previous" ]; then
        say "Replaced $PROGRAM $previous with $ran at:"
    else
        say "Installed $PROGRAM $ran at:"
    fi
    say "  $target"
    case ":${PATH:-}:" in
        *":$install_dir:"*) ;;
        *) say "" "Not on your PATH. To use it from a shell, add this line to your shell's profile:" \
            "  export PATH=$(sh_quote "$install_dir")\":\$PATH\"" ;;
    esac
    say "" "MCP client configuration (add it to your client's settings yourself; install.sh changes none):"
    print_snippet "$target"
    say "" "CLI example:  $target read --file README.md --start 1 --end 20"
}

# Runs at every exit: stops a download still running, removes the download area and a staged
# copy that was never moved in place.
cleanup() {
    # (a download still running: wget in the background ignores Ctrl-C)
    if [ -n "${fetch_pid:-}" ]; then kill "$fetch_pid" 2>/dev/null || true; fi
    if [ -n "${watch_pid:-}" ]; then kill "$watch_pid" 2>/dev/null || true; fi
    if [ -n "${staged:-}" ]; then rm -f "$staged"; fi
    if [ -n "${work:-}" ]; then rm -rf "$work"; fi
}

main "$@"
