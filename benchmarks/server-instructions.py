#!/usr/bin/env python3
"""Counts the instructions PostgreSQL's server runs for one transaction of the JDBC store, per table variant.

    sudo python3 benchmarks/server-instructions.py          # as root: it runs the server as the user postgres

Instructions rather than time: valgrind's count is the same from run to run whatever else the shared host does,
where CPU time per transaction moves by half. A scratch cluster (initdb, in a temporary directory, removed at the end)
runs in single-user mode under `valgrind --tool=callgrind`, fed one transaction after another of PREPAREd statements
with generic plans, as the store's server-prepared statements run: the claim in the caller's transaction as
PostgresDialect sends it (a savepoint; the insert that sets lock_timeout and the read that puts it back; the
release), the order's insert and the completion, then COMMIT; or, for a replay, the claim of a key whose completed
row is there. The count per transaction is the difference between N and N/5 transactions, divided by 4N/5, so that
starting the server and making the tables drop out. Single-user mode prints every result row as text and parses
EXECUTE's arguments as literals, which the wire protocol does not: compare variants, not absolute counts.

Variants: the table as schema-postgresql.sql makes it (the digests of a domain), with the two CHECK constraints of
the earlier script instead, with one CHECK on both, with no length rule at all; the claim's read skipped after an
insert (tried in the ninth round, not kept), and keyed through the statement's first CTE, as before the eighth
round, instead of by a parameter of its own; and the hash-partitioned table of schema-postgresql-partitioned.sql,
the three ways. The variants share one scratch cluster and run in this order:
the catalog's growth moves a later variant's count by a few thousand. Needs valgrind and the server's
binaries (/usr/lib/postgresql/<version>/bin, the newest there unless PG_BIN is set). docs/benchmarks-history.md
(eighth and ninth rounds) quotes its output.
"""
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

N = int(os.environ.get("TRANSACTIONS", "1500"))
BIN = os.environ.get("PG_BIN") or sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                                         key=lambda p: int(p.split("/")[-2]))[-1]
COLUMNS = ("key_hash {digest} NOT NULL, operation VARCHAR(255) NOT NULL, idem_key VARCHAR(255) NOT NULL, "
           "fingerprint {digest} NOT NULL, tier VARCHAR(16) NOT NULL, status VARCHAR(16) NOT NULL, result BYTEA, "
           "lease_until TIMESTAMPTZ(3), created_at TIMESTAMPTZ(3) NOT NULL, expires_at TIMESTAMPTZ(3) NOT NULL, "
           "CONSTRAINT t_pk PRIMARY KEY (key_hash){checks}")
# name: (the digests' type, CHECK constraints, hash-partitioned, the claim's read: "param" (as the store sends it:
# keyed by a parameter of its own), "gated" (keyed so and skipped after an insert: tried in the ninth round, not kept)
# or "k" (keyed through the first CTE: before the eighth round))
VARIANTS = {
    "the domain (schema-postgresql.sql)": ("t_sha256", "", False, "param"),
    "two CHECK constraints (the earlier script)": ("BYTEA", ", CONSTRAINT t_kl CHECK (octet_length(key_hash) = 32), "
                                                   "CONSTRAINT t_fl CHECK (octet_length(fingerprint) = 32)",
                                                   False, "param"),
    "one CHECK on both": ("BYTEA", ", CONSTRAINT t_l CHECK (octet_length(key_hash) = 32 "
                                   "AND octet_length(fingerprint) = 32)", False, "param"),
    "no length rule": ("BYTEA", "", False, "param"),
    "the read skipped after an insert (tried in the ninth round)": ("t_sha256", "", False, "gated"),
    "the read keyed through k (before the eighth round)": ("t_sha256", "", False, "k"),
    "hash-partitioned (schema-postgresql-partitioned.sql)": ("t_sha256", "", True, "param"),
    "hash-partitioned, the read skipped after an insert (tried in the ninth round)": ("t_sha256", "", True, "gated"),
    "hash-partitioned, the read keyed through k (before the eighth round)": ("t_sha256", "", True, "k"),
}
READ_PARAM = ("PREPARE claim(text, bytea, varchar, varchar, bytea, varchar, text, text, text, bytea) AS "
         "WITH k AS (SELECT CASE WHEN set_config('lock_timeout', CASE WHEN set_config('idempotency.lock_timeout', "
         "current_setting('lock_timeout'), true) IS NOT NULL THEN $1 END, true) IS NOT NULL THEN $2::bytea END "
         "AS key_hash), claim AS (INSERT INTO t (key_hash, operation, idem_key, fingerprint, tier, status, result, "
         "lease_until, created_at, expires_at) SELECT k.key_hash, $3, $4, $5, $6, 'IN_FLIGHT', NULL, "
         "$7::timestamptz, $8::timestamptz, $9::timestamptz FROM k ON CONFLICT (key_hash) DO NOTHING RETURNING 1) "
         "SELECT t.key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, created_at, "
         "expires_at, set_config('lock_timeout', current_setting('idempotency.lock_timeout'), true), inserted.n "
         "FROM (SELECT count(*) AS n FROM claim) inserted LEFT JOIN t ON t.key_hash = $10")
# the read skipped after an insert, whose row the statement's snapshot does not show: a LATERAL subquery gated by the
# insert's count (OFFSET 0 keeps the planner from folding the gate into a join filter, which probes the index anyway).
# Tried in the ninth round and not kept: it saves a first execution nothing countable and costs a replay more
# (docs/benchmarks-history.md, the ninth round)
GATED = READ_PARAM.replace("SELECT t.key_hash,", "SELECT key_hash,").replace(
    "LEFT JOIN t ON t.key_hash = $10",
    "LEFT JOIN LATERAL (SELECT key_hash, operation, idem_key, fingerprint, tier, status, result, lease_until, "
    "created_at, expires_at FROM t WHERE key_hash = $10 AND inserted.n = 0 OFFSET 0) found ON TRUE")
# as the store sent it before the eighth round: the read's key taken from k, so pruned only as the read runs
THROUGH_K = (READ_PARAM.replace(", text, text, text, bytea)", ", text, text, text)")
             .replace("t.key_hash = $10", "t.key_hash = (SELECT key_hash FROM k)"))
CLAIMS = {"gated": GATED, "param": READ_PARAM, "k": THROUGH_K}
COMPLETE = ("PREPARE complete(bytea, text, bytea, text) AS UPDATE t SET status = 'COMPLETED', result = $1, "
            "lease_until = NULL, expires_at = $2::timestamptz WHERE key_hash = $3 AND (status = 'IN_FLIGHT') IS TRUE "
            "AND lease_until = $4::timestamptz")


def script(variant, n, replay, seed):
    digest, checks, partitioned, read = VARIANTS[variant]
    out = ["DROP TABLE IF EXISTS t", "DROP TABLE IF EXISTS orders", "DROP DOMAIN IF EXISTS t_sha256",
           "CREATE DOMAIN t_sha256 AS BYTEA CONSTRAINT t_sha256_len CHECK (octet_length(VALUE) = 32)",
           "CREATE TABLE t (" + COLUMNS.format(digest=digest, checks=checks) + ")"
           + (" PARTITION BY HASH (key_hash)" if partitioned else "")]
    if partitioned:
        out += [f"CREATE TABLE t_p{i} PARTITION OF t FOR VALUES WITH (MODULUS 16, REMAINDER {i})" for i in range(16)]
    out += ["CREATE INDEX t_se ON t (status, expires_at)",
            "CREATE TABLE orders (id BIGSERIAL PRIMARY KEY, approval VARCHAR(64) NOT NULL, amount BIGINT NOT NULL)",
            "SET plan_cache_mode = force_generic_plan", CLAIMS[read], COMPLETE,
            "PREPARE ord(varchar, bigint) AS INSERT INTO orders (approval, amount) VALUES ($1, $2)"]
    if replay:  # one statement, so that its constraint checks are set up once, not per row
        out.append(f"INSERT INTO t SELECT sha256(('{seed}-' || g)::bytea), 'createOrder', '{seed}-' || g, "
                   f"sha256(('f{seed}-' || g)::bytea), 'REVERSIBLE', 'COMPLETED', '\\x7b7d', NULL, "
                   f"'2026-12-02 10:00:00.123+00', '2026-12-03 10:00:00.123+00' FROM generate_series(0, {n - 1}) g")
    for i in range(n):
        key = f"{seed}-{i}"
        h = hashlib.sha256(key.encode()).hexdigest()
        f = hashlib.sha256(("f" + key).encode()).hexdigest()
        out += ["BEGIN", "SAVEPOINT idempotency_claim",
                f"EXECUTE claim('5000ms', '\\x{h}', 'createOrder', '{key}', '\\x{f}', 'REVERSIBLE', "
                "'2026-12-02 10:05:00.123+00', '2026-12-02 10:00:00.123+00', '2026-12-03 10:00:00.123+00'"
                + (f", '\\x{h}')" if read != "k" else ")"),
                "RELEASE SAVEPOINT idempotency_claim"]
        if not replay:
            out += [f"EXECUTE ord('{key}', {i})",
                    f"EXECUTE complete('\\x7b226964223a317d', '2026-12-03 10:00:00.456+00', '\\x{h}', "
                    "'2026-12-02 10:05:00.123+00')"]
        out.append("COMMIT")
    return "\n".join(out) + "\n"


def instructions(work, variant, n, replay):
    sql = os.path.join(work, "in.sql")
    with open(sql, "w") as f:
        f.write(script(variant, n, replay, f"k{n}{int(replay)}"))
    out = os.path.join(work, "callgrind.out")
    run = subprocess.run(["su", "postgres", "-c",
                          f"valgrind --tool=callgrind --callgrind-out-file={out} {BIN}/postgres --single "
                          f"-D {work}/data -c synchronous_commit=off postgres < {sql} > /dev/null"],
                         capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", run.stderr)
    if not found:
        sys.exit(f"valgrind did not report a count for {variant}:\n{run.stderr[-2000:]}")
    return int(found.group(1))


def main():
    if os.geteuid() != 0:
        sys.exit("run as root: the scratch server runs as the user postgres")
    work = tempfile.mkdtemp(prefix="idem-instructions-")
    try:
        shutil.chown(work, "postgres")
        subprocess.run(["su", "postgres", "-c", f"{BIN}/initdb -D {work}/data -A trust -E UTF8 --no-locale"],
                       check=True, capture_output=True)
        print(f"PostgreSQL {BIN.split('/')[-2]}, thousands of instructions per transaction ({N} against {N // 5}):")
        print("| table | first execution | replay |")
        print("|---|---:|---:|")
        for variant in VARIANTS:
            per = []
            for replay in (False, True):
                many = instructions(work, variant, N, replay)
                few = instructions(work, variant, N // 5, replay)
                per.append((many - few) / (N - N // 5) / 1000)
            print(f"| {variant} | {per[0]:,.0f} | {per[1]:,.0f} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
