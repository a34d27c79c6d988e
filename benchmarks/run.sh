#!/usr/bin/env bash
# Runs the benchmarks and regenerates docs/benchmarks.md (between its generated markers) and docs/benchmarks/chart.svg.
#
#   benchmarks/run.sh                 # plan "short": the targets' configurations, 6 (quiet) to 15 minutes on 2 cores
#   PLAN=full benchmarks/run.sh       # every combination, longer iterations (about four times as long)
#   PLAN=large benchmarks/run.sh      # the 10,000,000-row tables, plain and hash-partitioned (not timed yet: the
#                                     # pre-fill of four 10M-row tables is most of it, an estimated 15-20 minutes)
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
java -cp "$CP" dev.idempotency.benchmarks.BenchmarkRunner --plan "$PLAN" \
    --out "$RESULTS/results.json" --info "$RESULTS/run-info.json" "$@" 2>&1 | tee "$RESULTS/run.log" \
    || status=$?

python3 benchmarks/report.py "$RESULTS/results.json" "$RESULTS/run-info.json" docs/benchmarks.md \
    docs/benchmarks/chart.svg
echo "done in $(( $(date +%s) - start )) s (exit $status)"
exit "$status"
