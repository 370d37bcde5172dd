#!/usr/bin/env bash
# Proves that README's two commands work from nothing, with an empty HOME and a PATH that holds neither pnpm nor a
# Node 24 (the system's Node 18+ and npm only), on a copy of the checkout (tracked and new files, no node_modules):
#   npm start -- --port <free port>     waits for /healthz, stops it with SIGTERM, expects a clean stop (exit 0)
#   npm test                            with SERVICE_BOOTSTRAP_ONLY=1: the set-up reaches the real test command
#                                       (`pnpm checks && pnpm test:unit` on Node 24 and pnpm 12); the suite itself is
#                                       CI's next step, not run twice
# then README's set-up lines by hand (scripts/readme-setup-lines.sh), in a second empty HOME: `node --version` is
# 24.x and `pnpm --version` answers, both from that HOME. Node and pnpm are downloaded from the npm registry each
# time; the dependencies come from this machine's pnpm store when there is one (pnpm_config_store_dir).
#   scripts/check-fresh-setup.sh [--keep]     --keep leaves the temporary HOMEs for inspection
set -euo pipefail
# A newcomer's terminal sets none of the service's settings; .ci/run exports the store's before it calls this, and with
# DATABASE_URL set `npm start` would serve PostgreSQL and want SECRET_KEY.
unset DATABASE_URL REDIS_URL SECRET_KEY
cd "$(dirname "$0")/.."

case "${1:-}" in
  -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --keep|'') ;;
  *) echo "check-fresh-setup: unknown option $1 (see --help)" >&2; exit 2 ;;
esac

work="$(mktemp -d "${TMPDIR:-/tmp}/fresh-setup.XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  [ "${1:-}" = "--keep" ] || rm -rf "$work"
}
trap 'cleanup "${1:-}"' EXIT
say() { echo "fresh set-up: $*"; }
fail() { echo "fresh set-up: $*" >&2; exit 1; }

# The machine's pnpm store (when there is a pnpm), so that `pnpm install` in the copy does not download every package again.
store_dir=""
if command -v pnpm >/dev/null 2>&1; then store_dir="$(dirname "$(pnpm store path 2>/dev/null)")" || store_dir=""; fi

# The machine's PATH without pnpm or a Node of major 24 or later. A folder that holds one of them (often
# /usr/bin, beside the system's node and npm) is replaced by a folder of links to everything else in it.
is_node24() { [ "$("$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 24 ]; }
shims="$work/path-shims"
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

say "PATH=$clean_path"
if PATH="$clean_path" command -v pnpm >/dev/null 2>&1; then fail "pnpm still on the clean PATH"; fi
system_node="$(PATH="$clean_path" command -v node)" || fail "no node on PATH: the two commands start from the system's Node 18+ and npm"
PATH="$clean_path" command -v npm >/dev/null 2>&1 || fail "no npm on PATH: the two commands start from the system's Node 18+ and npm"
say "system node $("$system_node" --version) at $system_node, npm $(PATH="$clean_path" npm --version)"

# ---- The two commands, on a copy of the checkout (what a clone holds, with this checkout's uncommitted changes).
home="$work/home"
checkout="$work/checkout"
mkdir -p "$home" "$checkout"
git ls-files -z --cached --others --exclude-standard | tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$checkout"
fresh() { (cd "$checkout" && exec env HOME="$home" PATH="$clean_path" ${store_dir:+"pnpm_config_store_dir=$store_dir"} "$@"); }

port="$("$system_node" -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
say "npm start -- --port $port   (HOME=$home, in a copy of the checkout)"
log="$work/npm-start.log"
# Started without a function or subshell in between, so that $! is npm itself (what a service manager signals).
cd "$checkout"
env HOME="$home" PATH="$clean_path" ${store_dir:+"pnpm_config_store_dir=$store_dir"} npm start -- --port "$port" --data-dir "$work/data" > >(tee "$log" | sed 's/^/  | /') 2>&1 &
cd - >/dev/null
server_pid=$!
started=$SECONDS
# Ready: /healthz answers and the server said so (its first start initialises the store after it listens).
until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && grep -q '^Listening on' "$log"; do
  kill -0 "$server_pid" 2>/dev/null || { wait "$server_pid" && code=0 || code=$?; fail "npm start ended (exit $code) before /healthz answered"; }
  [ $((SECONDS - started)) -lt 900 ] || fail "npm start: no /healthz on port $port after 900 s"
  sleep 1
done
say "npm start: /healthz answered on port $port and the server listens, after $((SECONDS - started)) s"
kill -TERM "$server_pid"
wait "$server_pid" && code=0 || code=$?
server_pid=""
[ "$code" -eq 0 ] || fail "npm start: exit $code after SIGTERM (expected 0, a graceful stop)"
grep -q '^Stopping\.' "$log" || fail "npm start: the server did not say 'Stopping.' (SIGTERM did not reach it)"
! curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 || fail "npm start: port $port still answers after the stop"
node24="$home/.cache/service-node24/node_modules/node-$(uname -s | tr 'A-Z' 'a-z')-$(uname -m | sed 's/x86_64/x64/;s/aarch64/arm64/')/bin"
[ -x "$node24/node" ] && [ -x "$node24/pnpm" ] || fail "npm start: no Node 24 and pnpm in $node24"
say "npm start: stopped cleanly (exit 0)"

say "SERVICE_BOOTSTRAP_ONLY=1 npm test   (the second command, Node 24 and pnpm already in the cache)"
out="$(fresh env SERVICE_BOOTSTRAP_ONLY=1 npm test 2>&1)" || { printf '%s\n' "$out" | sed 's/^/  | /'; fail "npm test: the set-up failed"; }
printf '%s\n' "$out" | sed 's/^/  | /'
printf '%s\n' "$out" | grep -qx 'would run: pnpm checks && pnpm test:unit' || fail "npm test: does not reach \`pnpm checks && pnpm test:unit\`"
printf '%s\n' "$out" | grep -Eq '^with: node v24\.[0-9.]+, pnpm 12\.' || fail "npm test: not on Node 24 and pnpm 12"

# ---- README's set-up lines by hand, in a second empty HOME, in one shell as a newcomer's terminal would be.
hand_home="$work/hand-home"
mkdir -p "$hand_home"
lines="$(scripts/readme-setup-lines.sh)"
say "README's set-up lines by hand (HOME=$hand_home)"
printf '%s\n' "$lines" | sed 's/^/  | /'
HOME="$hand_home" PATH="$clean_path" bash -euo pipefail -c "
$lines
v=\$(node --version)
case \"\$v\" in v24.*) echo \"fresh set-up: node \$v\" ;; *) echo \"fresh set-up: expected Node 24.x, got \$v\" >&2; exit 1 ;; esac
p=\$(command -v pnpm) || { echo 'fresh set-up: pnpm is not on PATH after the README lines' >&2; exit 1; }
case \"\$p\" in \"\$HOME\"/*) ;; *) echo \"fresh set-up: pnpm found outside the fresh HOME: \$p\" >&2; exit 1 ;; esac
echo \"fresh set-up: pnpm \$(pnpm --version) at \$p\"
"
say "ok"
