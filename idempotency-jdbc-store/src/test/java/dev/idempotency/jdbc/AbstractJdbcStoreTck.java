package dev.idempotency.jdbc;

import dev.idempotency.TransactionBridge;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.tck.AbstractStoreTransactionTest;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The whole store TCK, transactions included, on one database: each test gets its own table, created from the
 * dialect's shipped script and dropped afterwards. Subclasses supply the {@link DataSource}.
 */
abstract class AbstractJdbcStoreTck extends AbstractStoreTransactionTest {

    private String table;
    private TransactionTemplate transactions;

    /** The database; the same for every test of the class. */
    /** The database this suite runs on, registered by the subclass as a static extension. */
    protected abstract RealDatabase database();

    protected final DataSource dataSource() {
        return database().dataSource();
    }

    protected final JdbcDialect dialect() {
        return database().dialect();
    }

    @Override
    protected IdempotencyStore createStore() {
        table = TestSchema.uniqueTableName();
        database().createTable(table);
        transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource()));
        JdbcIdempotencyStore.Builder builder = JdbcIdempotencyStore.builder(dataSource()).tableName(table);
        JdbcIdempotencyStore store = (database().forcesDialect() ? builder.dialect(dialect()) : builder).build();
        org.assertj.core.api.Assertions.assertThat(store.dialect()).isSameAs(dialect());
        return store;
    }

    @Override
    protected void destroyStore(IdempotencyStore store) {
        TestSchema.drop(dataSource(), table);
    }

    /** The database's clock confirms every decision that depends on time. */
    @Override
    protected boolean hasSharedClock() {
        return true;
    }

    @Override
    protected TransactionBridge transactionBridge() {
        return new SpringTransactionBridge(new DataSourceTransactionManager(dataSource()));
    }

    @Override
    protected <T> T inTransaction(Supplier<T> work) {
        return transactions.execute(status -> work.get());
    }

    @Override
    protected void inRolledBackTransaction(Runnable work) {
        transactions.executeWithoutResult(status -> {
            work.run();
            status.setRollbackOnly();
        });
    }
}
