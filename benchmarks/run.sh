#!/usr/bin/env bash
# Runs the benchmarks and regenerates docs/benchmarks.md (between its generated markers) and docs/benchmarks/chart.svg.
#
#   benchmarks/run.sh                 # plan "short": every row of the targets table, the 10,000,000-row tables
#                                     # included, every compared pair measured A-B-B-A; 57 trials, 46 minutes
#                                     # at a load of 9 to 12 on the 2 cores (the pre-fill alone, both databases
#                                     # at once: 2 minutes when quiet, 8 at a load of 19)
#   PLAN=full benchmarks/run.sh       # every combination but the large tables, longer iterations (over an hour)
#   PLAN=large benchmarks/run.sh      # the large tables alone, plain and hash-partitioned, with the floor (c)
#   LARGE_ROWS=1000000 benchmarks/run.sh   # the large tables at another size (default 10000000): try a plan end to
#                                     # end on a small table first; the report then names the size it measured
#   benchmarks/run.sh --only 'postgresql'   # only the steps whose description matches (see Plan.java)
#   benchmarks/run.sh --prof jfr      # with JMH's JFR profiler (recordings under the working directory)
#
# Needs PostgreSQL and MariaDB (URLs below, or IDEMPOTENCY_POSTGRES_URL / IDEMPOTENCY_MARIADB_URL), a JDK 17,
# Maven and python3. Each run makes its own tables (bm_<8 hex>_*) and drops them at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

export IDEMPOTENCY_POSTGRES_URL="${IDEMPOTENCY_POSTGRES_URL:-jdbc:postgresql://127.0.0.1:5432/test?user=postgres}"
export IDEMPOTENCY_MARIADB_URL="${IDEMPOTENCY_MARIADB_URL:-jdbc:mariadb://127.0.0.1:3306/test?user=root}"
PLAN="${PLAN:-short}"
RESULTS=benchmarks/results

start=$(date +%s)
# the build runs RoundTripsIT (round trips counted on the wire, for the targets table) and no other test
echo "building (mvn package, running RoundTripsIT only)..."
mvn -B -q -pl benchmarks -am package -Dtest=RoundTripsIT -Dsurefire.failIfNoSpecifiedTests=false
grep -h "^round trips" idempotency-jdbc-store/target/surefire-reports/dev.idempotency.jdbc.RoundTripsIT-output.txt
CP="benchmarks/target/classes:$(cat benchmarks/target/run-classpath.txt)"

mkdir -p "$RESULTS"
status=0
java -Didempotency.bench.large="${LARGE_ROWS:-10000000}" -cp "$CP" \
    dev.idempotency.benchmarks.BenchmarkRunner --plan "$PLAN" \
    --out "$RESULTS/results.json" --info "$RESULTS/run-info.json" "$@" 2>&1 | tee "$RESULTS/run.log" \
    || status=$?

python3 benchmarks/report.py "$RESULTS/results.json" "$RESULTS/run-info.json" docs/benchmarks.md \
    docs/benchmarks/chart.svg
echo "done in $(( $(date +%s) - start )) s (exit $status)"
exit "$status"
