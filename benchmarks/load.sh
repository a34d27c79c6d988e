#!/usr/bin/env bash
# The load run: the order service over HTTP on PostgreSQL at fixed request rates, open loop, guarded
# (@IdempotentRequest with the JDBC store) and unguarded, 0% and 50% duplicate keys, one node and three nodes
# (child JVMs) against one database. About 10 minutes; see docs/benchmarks.md, "Load held".
#
#   benchmarks/load.sh                          # the whole run, defaults
#   benchmarks/load.sh --rates 100,200 --three-nodes-duplicates none   # options: LoadRun.DEFAULTS
#   MVN_FLAGS="-o" benchmarks/load.sh           # extra Maven flags for the build
#   NO_BUILD=1 benchmarks/load.sh               # run what was built last
#
# Needs PostgreSQL at IDEMPOTENCY_POSTGRES_URL (default this machine's 127.0.0.1:5432, user postgres, db test), a
# JDK 17 and Maven. The run makes its own tables (ld_<8 hex>_orders, ld_<8 hex>_idem) and drops them at the end; the
# figures go to benchmarks/results/ld_<8 hex>.md, the nodes' standard error beside them.
set -euo pipefail
cd "$(dirname "$0")/.."

export IDEMPOTENCY_POSTGRES_URL="${IDEMPOTENCY_POSTGRES_URL:-jdbc:postgresql://127.0.0.1:5432/test?user=postgres}"
if [ -z "${NO_BUILD:-}" ]; then
    echo "building (mvn package, no tests)..."
    # shellcheck disable=SC2086
    mvn -B -q ${MVN_FLAGS:-} -pl benchmarks -am package -DskipTests
fi
CP="benchmarks/target/classes:$(cat benchmarks/target/run-classpath.txt)"
exec java -cp "$CP" dev.idempotency.benchmarks.load.LoadRun "$@"
