#!/usr/bin/env bash
# Profiles one order benchmark with JFR and counts what one transaction costs in round trips to the database.
#
#   benchmarks/profile.sh postgresql b [threads] [duplicates] [prefill]
#
# Records CPU samples (jdk.ExecutionSample) and every socket read and write (the JDK's profile.jfc with the socket
# thresholds set to 0 ms) during one 5 s measurement, then prints: transactions measured, socket reads per
# transaction (one read ~ one round trip), and the hottest frames. Run benchmarks/run.sh once first (it builds the
# module), or: mvn -B -q -pl benchmarks -am package -DskipTests
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${1:?database: postgresql or mariadb}; GUARD=${2:?guard: a b c d e}
THREADS=${3:-1}; DUP=${4:-0}; PREFILL=${5:-0}
OUT=benchmarks/results/profile-$DB-$GUARD-t$THREADS-d$DUP-p$PREFILL
mkdir -p benchmarks/results
JFC=benchmarks/results/roundtrips.jfc
sed -E '/<event name="jdk.Socket(Read|Write)">/,/<\/event>/ s|(<setting name="threshold"[^>]*>)[^<]*|\10 ms|' \
    "$(dirname "$(readlink -f "$(command -v java)")")/../lib/jfr/profile.jfc" > "$JFC"
export IDEMPOTENCY_POSTGRES_URL="${IDEMPOTENCY_POSTGRES_URL:-jdbc:postgresql://127.0.0.1:5432/test?user=postgres}"
export IDEMPOTENCY_MARIADB_URL="${IDEMPOTENCY_MARIADB_URL:-jdbc:mariadb://127.0.0.1:3306/test?user=root}"
CP="benchmarks/target/classes:$(cat benchmarks/target/run-classpath.txt)"
# warmup 2 x 2 s without recording, then one 5 s iteration recorded by JMH's JFR profiler
rm -rf "$OUT.d"
java -cp "$CP" org.openjdk.jmh.Main 'OrderBenchmark' -p db="$DB" -p guard="$GUARD" -p duplicates="$DUP" \
    -p prefill="$PREFILL" -t "$THREADS" -f 1 -wi 2 -w 2s -i 1 -r 5s -rf json -rff "$OUT.json" \
    -prof "jfr:configName=$PWD/$JFC;dir=$OUT.d;stackDepth=96" > "$OUT.log" 2>&1
JFR_FILE=$(find "$OUT.d" -name '*.jfr' | head -1)
python3 - "$OUT.json" "$JFR_FILE" <<'PY'
import json, subprocess, sys, collections
score = json.load(open(sys.argv[1]))[0]["primaryMetric"]["score"]
def events(name):
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events", name, sys.argv[2]],
                         capture_output=True, text=True)
    return json.loads(out.stdout)["recording"]["events"]
# who asked for each round trip: the first frame (from the top) in the library, Spring's JDBC/transaction code,
# or a peer, below the driver and the pool
OURS = ("dev/idempotency/", "org/springframework/jdbc/", "org/springframework/integration/", "org/apache/camel/",
        "org/springframework/transaction/")
def caller(e):
    for f in e["values"]["stackTrace"]["frames"]:
        t = f["method"]["type"]["name"]
        if t.startswith(OURS) and "jmh_generated" not in t:
            return t.rsplit("/", 1)[-1] + "." + f["method"]["name"]
    return "(other)"
def micros(d):  # JFR durations print as ISO-8601, e.g. "PT0.000123S"
    return float(d[2:-1]) * 1e6 if d.startswith("PT") and d.endswith("S") else 0.0
reads, waited = collections.Counter(), collections.Counter()
for e in events("jdk.SocketRead"):
    reads[caller(e)] += 1
    waited[caller(e)] += micros(e["values"]["duration"])
commits = sum(n for k, n in reads.items() if "doCommit" in k) or 1
print(f"throughput {score:,.0f} tx/s; {commits:,} commits recorded; {sum(reads.values()):,} socket reads: "
      f"{sum(reads.values()) / commits:.1f} per transaction, {sum(waited.values()) / commits:,.0f} us waited on them;"
      f" by caller (reads, us waited, per transaction):")
for k, n in reads.most_common(15):
    print(f"  {n / commits:5.2f} {waited[k] / commits:8,.0f} us  {k}")
samples = events("jdk.ExecutionSample")
top = collections.Counter()
for e in samples:
    frames = e["values"]["stackTrace"]["frames"]
    if frames:
        m = frames[0]["method"]
        top[m["type"]["name"] + "." + m["name"]] += 1
print(f"{len(samples)} CPU samples; hottest frames:")
for name, n in top.most_common(10):
    print(f"  {n * 100 / max(1, len(samples)):5.1f}%  {name}")
PY
