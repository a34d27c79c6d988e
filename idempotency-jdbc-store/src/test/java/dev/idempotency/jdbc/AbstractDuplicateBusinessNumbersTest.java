package dev.idempotency.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The reconciliation helper on a business table of each database: the numbers written more than once in the window,
 * counted in full and listed up to the limit, the window's bounds respected, and identifiers that could carry SQL
 * refused before any statement is built.
 */
abstract class AbstractDuplicateBusinessNumbersTest {

    private static final Instant NOW = Instant.parse("2026-06-01T12:00:00.000Z");

    abstract RealDatabase database();

    /** The type of the business table's timestamp column on this database. */
    abstract String timestampType();

    private String table;
    private JdbcTemplate jdbc;

    @BeforeEach
    void createOrders() {
        table = "orders_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        jdbc = new JdbcTemplate(database().dataSource());
        jdbc.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, approval_no VARCHAR(64) NOT NULL, created_at "
                + timestampType() + " NOT NULL)");
    }

    @AfterEach
    void dropOrders() {
        jdbc.execute("DROP TABLE IF EXISTS " + table);
    }

    private int id;

    private void order(String approvalNo, Instant createdAt) {
        jdbc.update("INSERT INTO " + table + " (id, approval_no, created_at) VALUES (?, ?, ?)", ++id, approvalNo,
                database().dialect().timestamp(createdAt));
    }

    private DuplicateBusinessNumbers.Builder check() {
        return DuplicateBusinessNumbers.builder(database().dataSource()).table(table).numberColumn("approval_no")
                .timestampColumn("created_at").clock(Clock.fixed(NOW, ZoneOffset.UTC));
    }

    @Test
    void numbersWrittenMoreThanOnceInTheWindowAreCountedAndListedMostRowsFirst() {
        order("A-1", NOW.minusSeconds(3600));
        order("A-1", NOW.minusSeconds(60));
        order("A-2", NOW.minusSeconds(500));
        order("A-3", NOW.minusSeconds(400));
        order("A-3", NOW.minusSeconds(300));
        order("A-3", NOW.minusSeconds(200));
        order("A-4", NOW.minus(Duration.ofDays(2)));   // before the window: its second row alone is in it
        order("A-4", NOW.minusSeconds(100));
        order("A-5", NOW.minusMillis(1));
        order("A-5", NOW);                             // the window's end is excluded

        DuplicateBusinessNumbers helper = check().limit(1).build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        helper.bindTo(registry);
        DuplicateBusinessNumbers.Report report = helper.check();

        assertThat(report.duplicatedNumbers()).isEqualTo(2);
        assertThat(report.duplicates()).containsExactly(new DuplicateBusinessNumbers.Duplicate("A-3", 3,
                NOW.minusSeconds(400), NOW.minusSeconds(200)));
        assertThat(report.toMarkdown()).contains("2 numbers written more than once").contains("| A-3 | 3 |")
                .contains("(the first 1 of 2)");
        assertThat(registry.get(DuplicateBusinessNumbers.METER).tag("table", table).tag("column", "approval_no")
                .gauge().value()).isEqualTo(2);
        assertThat(check().build().check().duplicates()).extracting(DuplicateBusinessNumbers.Duplicate::businessNumber)
                .containsExactly("A-3", "A-1");
    }

    @Test
    void identifiersThatCouldCarrySqlAreRefusedNamingTheSetting() {
        assertThatThrownBy(() -> DuplicateBusinessNumbers.builder(database().dataSource())
                .table("orders; DROP TABLE orders"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("DuplicateBusinessNumbers.Builder.table")
                .hasMessageContaining("not a plain SQL identifier");
        assertThatThrownBy(() -> DuplicateBusinessNumbers.builder(database().dataSource())
                .numberColumn("approval_no) OR (1=1"))
                .hasMessageContaining("DuplicateBusinessNumbers.Builder.numberColumn");
        assertThatThrownBy(() -> DuplicateBusinessNumbers.builder(database().dataSource()).timestampColumn("s.created"))
                .hasMessageContaining("DuplicateBusinessNumbers.Builder.timestampColumn");
        assertThatThrownBy(() -> DuplicateBusinessNumbers.builder(database().dataSource()).table(table).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("numberColumn(...)");
        assertThatThrownBy(() -> check().build().check(NOW, NOW)).hasMessageContaining("must end after it starts");
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class)).isZero();
    }
}
