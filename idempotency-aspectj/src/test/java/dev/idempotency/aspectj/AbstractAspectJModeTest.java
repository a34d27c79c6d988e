package dev.idempotency.aspectj;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.internal.Keys;
import dev.idempotency.spring.IdempotentAspect;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@code @EnableIdempotency(mode = ASPECTJ)}: the woven aspect guards a self-invocation, inside the transaction of the
 * call, once per call; no proxy advice is registered. Run once per way the transaction is applied (proxied, woven).
 */
abstract class AbstractAspectJModeTest {

    @Autowired ApplicationContext context;
    @Autowired OrderDesk desk;
    @Autowired CountingStore store;
    @Autowired PlatformTransactionManager transactionManager;

    String cartId;

    @BeforeEach
    void fresh() {
        cartId = "CART-" + UUID.randomUUID();
        desk.runs().set(0);
        store.claims.set(0);
        store.claimsInTransaction.set(0);
    }

    private boolean recorded() {
        return store.find(Keys.hash("OrderDesk.place", "", Keys.normalize("ORDER:" + cartId))).isPresent();
    }

    @Test
    void theWovenAspectIsConfiguredAndNoProxyAdviceIsRegistered() {
        assertThat(context.getBeansOfType(IdempotentAspect.class)).isEmpty();
        assertThat(context.getBean(WovenIdempotentAspect.class)).isSameAs(WovenIdempotentAspect.instance());
        assertThat(WovenIdempotentAspect.isConfigured()).isTrue();
    }

    @Test
    void aSelfInvocationIsGuardedOncePerCall() {
        String first = desk.checkout(cartId);
        String second = desk.checkout(cartId);

        assertThat(second).isEqualTo(first);
        assertThat(desk.runs()).hasValue(1);
        assertThat(desk.rows(cartId)).isEqualTo(1);
        assertThat(store.claims).hasValue(2);
        assertThat(store.claimsInTransaction).hasValue(2);
        assertThat(recorded()).isTrue();
    }

    @Test
    void theClaimOfASelfInvocationIsWrittenInTheCallersTransactionAndRollsBackWithIt() {
        new TransactionTemplate(transactionManager).executeWithoutResult(status -> {
            desk.checkout(cartId);
            status.setRollbackOnly();
        });

        assertThat(store.claimsInTransaction).hasValue(1);
        assertThat(desk.rows(cartId)).isZero();
        assertThat(recorded()).isFalse();

        desk.checkout(cartId);
        assertThat(desk.runs()).hasValue(2);
        assertThat(desk.rows(cartId)).isEqualTo(1);
        assertThat(recorded()).isTrue();
    }

    @Test
    void aDirectCallClaimsInsideItsOwnTransaction() {
        // no outer transaction: only place's own @Transactional, which must run outside the idempotency advice
        desk.place(cartId);

        assertThat(store.claims).hasValue(1);
        assertThat(store.claimsInTransaction).hasValue(1);
        assertThat(recorded()).isTrue();
    }
}
