package dev.idempotency.faults;

import java.util.UUID;

/** The tables of one suite, uniquely named: the idempotency table (the shipped script), business rows, accounts. */
record Tables(String idempotency, String business, String accounts) {

    static Tables unique() {
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        return new Tables("idem_f_" + suffix, "biz_f_" + suffix, "acct_f_" + suffix);
    }
}
