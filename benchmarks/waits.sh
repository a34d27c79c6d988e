#!/usr/bin/env bash
# Where the client threads of an order benchmark wait, for two or more guards measured side by side in one run:
# the question "is something serializing the guarded calls, or is it their cost?".
#
#   benchmarks/waits.sh postgresql b,c [threads]     # default 16 threads
#
# One JMH fork per guard (1 s warm-up, 2 x 6 s measured, after the benchmark's own warm-up of
# -Didempotency.bench.warmup transactions, 6,000 here). While each fork measures, every half second: a jstack of the
# fork (where each client thread is: the first frame of the library, Spring's transaction code or the guard's class),
# the machine's and the fork's CPU counters, and the database sessions of that fork's connections (PostgreSQL:
# pg_stat_activity's state and wait event, and pg_locks not granted; MariaDB: the processlist's command and state,
# and InnoDB transactions in LOCK WAIT). JFR records, from the first measured iteration to the end of the trial,
# every park and monitor wait of 1 ms or more (JFR and jstack cost CPU: take the CPU per transaction from run.sh).
# Prints, per guard: the throughput, the CPU per transaction, how busy the machine was and the JVM's share, the
# threads' positions, the sessions' states, the lock waits, and the parks/monitor waits under the library's or the
# pool's frames. Run benchmarks/run.sh once first (it builds the module), or:
# mvn -B -q -pl benchmarks -am package -DskipTests
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${1:?database: postgresql or mariadb}; GUARDS=${2:-b,c}; THREADS=${3:-16}
OUT=benchmarks/results/waits-$DB-${GUARDS//,/}-t$THREADS
rm -rf "$OUT"; mkdir -p "$OUT"
JFC=$OUT/waits.jfc
sed -E '/<event name="jdk.(ThreadPark|JavaMonitorEnter)">/,/<\/event>/ s|(<setting name="threshold"[^>]*>)[^<]*|\11 ms|' \
    "$(dirname "$(readlink -f "$(command -v java)")")/../lib/jfr/default.jfc" > "$JFC"
export IDEMPOTENCY_POSTGRES_URL="${IDEMPOTENCY_POSTGRES_URL:-jdbc:postgresql://127.0.0.1:5432/test?user=postgres}"
export IDEMPOTENCY_MARIADB_URL="${IDEMPOTENCY_MARIADB_URL:-jdbc:mariadb://127.0.0.1:3306/test?user=root}"
CP="benchmarks/target/classes:$(cat benchmarks/target/run-classpath.txt)"

java -cp "$CP" org.openjdk.jmh.Main 'orders.OrderBenchmark' -p db="$DB" -p guard="$GUARDS" -p duplicates=0 \
    -p prefill=0 -t "$THREADS" -f 1 -wi 1 -w 1s -i 2 -r 6s -rf json -rff "$OUT/result.json" \
    -jvmArgsAppend "-Didempotency.bench.warmup=${WARMUP:-6000} -Didempotency.bench.costs=$PWD/$OUT/costs.jsonl" \
    -prof "jfr:configName=$PWD/$JFC;dir=$OUT/jfr" > "$OUT/jmh.log" 2>&1 &
jmh=$!
forks=()
i=0
while kill -0 "$jmh" 2>/dev/null; do
    fork=$(pgrep -P "$jmh" -f ForkedMain | head -1 || true)
    # only while an iteration is measured (its line has no score yet), not in set-up, warm-up or between iterations
    if [ -n "$fork" ] && tail -1 "$OUT/jmh.log" | grep -qE '^Iteration +[0-9]+: *$'; then
        [[ " ${forks[*]} " == *" $fork "* ]] || forks+=("$fork")
        g=$(echo "$GUARDS" | cut -d, -f"${#forks[@]}")
        i=$((i + 1))
        # the machine's CPU counters and the fork's (clock ticks): how busy the machine is, and the JVM's share
        echo "$(date +%s.%N) $(head -1 /proc/stat | cut -d' ' -f3-) jvm $(cut -d' ' -f14,15 "/proc/$fork/stat")" \
            >> "$OUT/$g.cpu"
        jstack "$fork" > "$OUT/$g.jstack.$i" 2>/dev/null || true
        ports=$(ss -tnp 2>/dev/null | grep "pid=$fork," | awk '{print $4}' | awk -F: '{print $NF}' | paste -sd, - || true)
        if [ -n "$ports" ] && [ "$DB" = postgresql ]; then
            psql -h 127.0.0.1 -U postgres -d test -AtF '|' -c "SELECT state, coalesce(wait_event_type, '-'),
                coalesce(wait_event, '-') FROM pg_stat_activity WHERE client_port IN ($ports)
                AND query NOT LIKE 'SELECT pg_backend_pid%'" > "$OUT/$g.sessions.$i" 2>&1 || true
            psql -h 127.0.0.1 -U postgres -d test -At -c "SELECT 'lock-wait' FROM pg_locks l JOIN pg_stat_activity a
                ON a.pid = l.pid WHERE NOT l.granted AND a.client_port IN ($ports)" > "$OUT/$g.locks.$i" 2>&1 || true
        elif [ -n "$ports" ]; then
            hosts=$(echo "$ports" | sed -E "s/([0-9]+)/'127.0.0.1:\1'/g")
            mariadb -h 127.0.0.1 -u root -N -e "SELECT command, coalesce(state, ''), '-' FROM
                information_schema.processlist WHERE host IN ($hosts)" | tr '\t' '|' > "$OUT/$g.sessions.$i" 2>&1 || true
            mariadb -h 127.0.0.1 -u root -N -e "SELECT 'lock-wait' FROM information_schema.innodb_trx t JOIN
                information_schema.processlist p ON p.id = t.trx_mysql_thread_id WHERE p.host IN ($hosts) AND
                t.trx_state = 'LOCK WAIT'" > "$OUT/$g.locks.$i" 2>&1 || true
        fi
    fi
    sleep 0.5
done
wait "$jmh" || { echo "JMH failed: see $OUT/jmh.log"; exit 1; }

python3 - "$OUT" "$GUARDS" <<'PY'
import collections, glob, json, os, re, subprocess, sys
out, guards = sys.argv[1], sys.argv[2].split(",")
scores = {r["params"]["guard"]: r["primaryMetric"]["score"] for r in json.load(open(f"{out}/result.json"))}
costs = {}
for line in open(f"{out}/costs.jsonl"):
    c = json.loads(line)
    costs[c["guard"]] = c
# the first frame (from the top) that says who waits: the library, Spring's transaction/JDBC code, the pool, a guard
WHO = re.compile(r"at (dev\.idempotency\.(?!benchmarks)[\w.$]+|org\.springframework\.jdbc\.datasource\.\w+\.do\w+"
                 r"|com\.zaxxer\.hikari\.pool\.HikariPool\.\w+|dev\.idempotency\.benchmarks\.orders\.\w+\.\w+)")
def positions(g):
    where = collections.Counter()
    for f in glob.glob(f"{out}/{g}.jstack.*"):
        for block in open(f).read().split("\n\n"):
            # a client thread inside a transaction (not in JMH's own loop, set-up or tear-down)
            if "jmh-worker" not in block or "OrderBenchmark.placeOrder(" not in block:
                continue
            frames = [l.strip() for l in block.splitlines()[2:] if l.strip().startswith("at ")]
            who = next((m.group(1) for l in frames for m in [WHO.match(l)] if m), "?")
            top = re.sub(r"\(.*", "", frames[0][3:]) if frames else "?"
            where[("waits on the database" if top.startswith("sun.nio.ch.") else top) + " <- " + who] += 1
    return where
def durations(jfr, event):
    if not jfr:
        return collections.Counter()
    raw = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events", event, jfr],
                         capture_output=True, text=True).stdout
    total = collections.Counter()
    for e in json.loads(raw)["recording"]["events"]:
        v = e["values"]
        if "jmh-worker" not in (v.get("eventThread") or {}).get("javaName", ""):
            continue
        names = [f["method"]["type"]["name"] + "." + f["method"]["name"] for f in v["stackTrace"]["frames"]]
        who = next((n for n in names if n.startswith(("dev/idempotency/", "com/zaxxer/hikari/"))
                    and not n.startswith("dev/idempotency/benchmarks/orders/jmh_generated")), None)
        if who:
            m = re.match(r"PT(?:(\d+)M)?([\d.]+)S", v["duration"])
            total[who] += (int(m.group(1) or 0) * 60 + float(m.group(2))) * 1000
    return total
for g in guards:
    c = costs.get(g, {})
    n = c.get("transactions") or 1
    print(f"== ({g}) {scores.get(g, 0):,.0f} tx/s; per transaction: JVM CPU {c.get('jvm_cpu_ns', 0) / n / 1e3:.0f} us,"
          f" database CPU {c.get('backend_cpu_ns', 0) / n / 1e3:.0f} us")
    try:
        rows = [line.split() for line in open(f"{out}/{g}.cpu")]
        a, b = rows[0], rows[-1]
        ticks = os.sysconf("SC_CLK_TCK")
        wall = float(b[0]) - float(a[0])
        cpu = [int(y) - int(x) for x, y in zip(a[1:11], b[1:11])]
        busy = 1 - (cpu[3] + cpu[4]) / sum(cpu)  # idle and iowait
        jvm = (int(b[12]) + int(b[13]) - int(a[12]) - int(a[13])) / ticks / wall
        print(f"   machine ({os.cpu_count()} cores) busy {100 * busy:.0f}%; the benchmark's JVM used {jvm:.2f} cores")
    except (OSError, IndexError, ZeroDivisionError):
        print("   machine CPU: too few samples")
    where = positions(g)
    total = sum(where.values()) or 1
    print(f"   client threads ({total} samples):")
    for k, v in where.most_common(6):
        print(f"     {100 * v / total:5.1f}%  {k}")
    states = collections.Counter()
    for f in glob.glob(f"{out}/{g}.sessions.*"):
        for line in open(f):
            if line.strip():
                states[line.strip()] += 1
    stotal = sum(states.values()) or 1
    print(f"   database sessions ({stotal} samples):")
    for k, v in states.most_common(6):
        print(f"     {100 * v / stotal:5.1f}%  {k}")
    waits = sum(1 for f in glob.glob(f"{out}/{g}.locks.*") for l in open(f) if l.strip() == "lock-wait")
    print(f"   sessions waiting on a database lock: {waits}")
    jfr = next(iter(glob.glob(f"{out}/jfr/*guard-{g}-*/*.jfr") + glob.glob(f"{out}/jfr/*guard-{g}*/*.jfr")), None)
    for event in ("jdk.ThreadPark", "jdk.JavaMonitorEnter"):
        d = durations(jfr, event)
        shown = ", ".join(f"{k} {v:.0f} ms" for k, v in d.most_common(3)) or "none"
        print(f"   {event} >= 1 ms under the library or the pool (first measured iteration to end of trial): {shown}")
PY
