package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.TransactionBridge;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

class SpringTransactionBridgeTest {

    static final EmbeddedDatabase DB = new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
            .generateUniqueName(true).build();
    static final DataSourceTransactionManager TM = new DataSourceTransactionManager(DB);

    final SpringTransactionBridge bridge = SpringTransactionBridge.INSTANCE;
    final List<TransactionBridge.Completion> completions = new CopyOnWriteArrayList<>();

    @AfterAll
    static void shutdown() {
        DB.shutdown();
    }

    @Test
    void outsideATransactionNothingIsActiveAndNothingCanBeAwaited() {
        assertThat(bridge.isTransactionActive()).isFalse();
        assertThatThrownBy(() -> bridge.afterCompletion(completions::add))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aCommitIsReportedAsCommittedAfterItHappened() {
        new TransactionTemplate(TM).executeWithoutResult(status -> {
            assertThat(bridge.isTransactionActive()).isTrue();
            bridge.afterCompletion(completions::add);
            assertThat(completions).isEmpty();
        });
        assertThat(completions).containsExactly(TransactionBridge.Completion.COMMITTED);
    }

    @Test
    void aRollbackIsReportedAsNotCommitted() {
        new TransactionTemplate(TM).executeWithoutResult(status -> {
            bridge.afterCompletion(completions::add);
            status.setRollbackOnly();
        });
        assertThat(completions).containsExactly(TransactionBridge.Completion.ROLLED_BACK);
    }

    @Test
    void aSupportsScopeWithoutAnActualTransactionIsNotActive() {
        TransactionTemplate supports = new TransactionTemplate(TM);
        supports.setPropagationBehavior(TransactionDefinition.PROPAGATION_SUPPORTS);
        supports.executeWithoutResult(status -> assertThat(bridge.isTransactionActive()).isFalse());
    }
}
