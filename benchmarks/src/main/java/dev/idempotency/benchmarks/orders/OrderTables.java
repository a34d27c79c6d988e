package dev.idempotency.benchmarks.orders;

import dev.idempotency.benchmarks.Database;

/** The tables one trial writes: the orders, and the guard's own. */
public record OrderTables(Database db, String orders, String guard, String siPrefix) {

    /** The business write every guard protects: one order row, its generated id returned. */
    String insertOrder() {
        return "INSERT INTO " + orders + " (order_no, customer, amount_cents) VALUES (?, ?, ?) RETURNING id";
    }
}
