package dev.idempotency.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.support.TransactionOperations;
import org.springframework.transaction.support.TransactionTemplate;

/** The ways in rely on it: the call's own exception, checked or not, and a rollback when it throws. */
class TransactionalCallTest {

    static final EmbeddedDatabase DB = new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
            .generateUniqueName(true).build();
    static final TransactionTemplate TX = new TransactionTemplate(new DataSourceTransactionManager(DB));
    final JdbcTemplate jdbc = new JdbcTemplate(DB);

    @BeforeEach
    void table() {
        jdbc.execute("create table if not exists writes (v varchar(10))");
        jdbc.update("delete from writes");
    }

    @AfterAll
    static void shutdown() {
        DB.shutdown();
    }

    @Test
    void aReturningCallCommitsAndGivesItsValue() {
        String value = TransactionalCall.run(TX, () -> {
            jdbc.update("insert into writes values ('a')");
            return "done";
        });
        assertThat(value).isEqualTo("done");
        assertThat(jdbc.queryForObject("select count(*) from writes", Integer.class)).isEqualTo(1);
    }

    @Test
    void aCheckedExceptionReachesTheCallerUnchangedAndRollsBack() {
        IOException thrown = new IOException("disk gone");
        assertThatThrownBy(() -> TransactionalCall.run(TX, () -> {
            jdbc.update("insert into writes values ('a')");
            throw thrown;
        })).isSameAs(thrown);
        assertThat(jdbc.queryForObject("select count(*) from writes", Integer.class)).isZero();
    }

    @Test
    void aRuntimeExceptionAndAnErrorReachTheCallerUnchanged() {
        IllegalStateException runtime = new IllegalStateException("refused");
        assertThatThrownBy(() -> TransactionalCall.run(TX, () -> {
            throw runtime;
        })).isSameAs(runtime);
        AssertionError error = new AssertionError("broken");
        assertThatThrownBy(() -> TransactionalCall.run(TX, () -> {
            throw error;
        })).isSameAs(error);
    }

    @Test
    void withoutTransactionTheCallRunsAndItsCheckedExceptionPassesUnchanged() throws Exception {
        assertThat(TransactionalCall.run(TransactionOperations.withoutTransaction(), () -> 42)).isEqualTo(42);
        Exception thrown = new Exception("checked");
        assertThatThrownBy(() -> TransactionalCall.run(TransactionOperations.withoutTransaction(), () -> {
            throw thrown;
        })).isSameAs(thrown);
    }
}
