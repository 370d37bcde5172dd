#!/usr/bin/env bash
# Proves that README's set-up lines work from nothing: runs them (taken from README.md itself, see
# scripts/readme-setup-lines.sh) with an empty HOME and a PATH that holds neither pnpm nor a Node 24, then checks
# that `node --version` is 24.x and `pnpm --version` answers, both from the new HOME.
#   scripts/check-fresh-setup.sh [--keep]     --keep leaves the temporary HOME for inspection
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --keep|'') ;;
  *) echo "check-fresh-setup: unknown option $1 (see --help)" >&2; exit 2 ;;
esac

fresh_home="$(mktemp -d "${TMPDIR:-/tmp}/fresh-home.XXXXXX")"
[ "${1:-}" = "--keep" ] || trap 'rm -rf "$fresh_home"' EXIT

# The machine's PATH without pnpm or a Node of major 24 or later. A folder that holds one of them (often
# /usr/bin, beside the system's node and npm) is replaced by a folder of links to everything else in it.
is_node24() { [ "$("$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 24 ]; }
shims="$fresh_home/.path-shims"
clean_path=""
IFS=':' read -r -a dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [ -n "$dir" ] && [ -d "$dir" ] || continue
  if [ -e "$dir/pnpm" ] || { [ -x "$dir/node" ] && is_node24 "$dir/node"; }; then
    shim="$shims/$(printf '%s' "$dir" | tr '/' '_')"
    mkdir -p "$shim"
    for file in "$dir"/*; do
      name="$(basename "$file")"
      case "$name" in pnpm | pnpx | pn | pnx) continue ;; esac
      [ "$name" = node ] && is_node24 "$file" && continue
      [ -x "$file" ] && [ ! -d "$file" ] && ln -s "$file" "$shim/$name"
    done
    dir="$shim"
  fi
  clean_path="${clean_path:+$clean_path:}$dir"
done

echo "fresh set-up: HOME=$fresh_home"
echo "fresh set-up: PATH=$clean_path"
if PATH="$clean_path" command -v pnpm >/dev/null 2>&1; then echo "fresh set-up: pnpm still on the clean PATH" >&2; exit 1; fi

lines="$(scripts/readme-setup-lines.sh)"
printf '%s\n' "$lines" | sed 's/^/  | /'

# The README's lines, then the checks, in one shell as a newcomer's terminal would be.
HOME="$fresh_home" PATH="$clean_path" bash -euo pipefail -c "
$lines
v=\$(node --version)
case \"\$v\" in v24.*) echo \"fresh set-up: node \$v\" ;; *) echo \"fresh set-up: expected Node 24.x, got \$v\" >&2; exit 1 ;; esac
p=\$(command -v pnpm) || { echo 'fresh set-up: pnpm is not on PATH after the README lines' >&2; exit 1; }
case \"\$p\" in \"\$HOME\"/*) ;; *) echo \"fresh set-up: pnpm found outside the fresh HOME: \$p\" >&2; exit 1 ;; esac
echo \"fresh set-up: pnpm \$(pnpm --version) at \$p\"
"
echo "fresh set-up: ok"
