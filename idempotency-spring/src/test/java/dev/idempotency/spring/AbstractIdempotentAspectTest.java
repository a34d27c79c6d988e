package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.internal.Keys;
import dev.idempotency.spring.PaymentGateway.PaymentReceipt;
import dev.idempotency.store.IdempotencyRecord;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;
import dev.idempotency.metrics.MicrometerIdempotencyListener;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What a user relies on when calling an {@code @Idempotent} Spring bean, run once per store and per way the advice is
 * applied: each subclass supplies the {@code IdempotencyStore} of {@link AspectTestConfiguration}'s context and its
 * {@code @EnableIdempotency} (idempotency-aspectj runs this suite again against the aspect woven at load time).
 */
abstract class AbstractIdempotentAspectTest {

    static final String CREATE_ORDER = "OrderService.createOrder";

    @Autowired OrderService orders;
    @Autowired PaymentGateway payments;
    @Autowired PaymentService.Ledger paymentService;
    @Autowired RecordingStore store;
    @Autowired PlatformTransactionManager transactionManager;
    @Autowired SimpleMeterRegistry meters;

    /** Whether the idempotency advice is a proxy's ({@code AdviceMode.PROXY}); false where it is woven. */
    protected boolean proxied() {
        return true;
    }

    String approvalNo;
    private final Map<String, Double> callsBefore = new HashMap<>();

    @BeforeEach
    void countersBefore() {
        for (String outcome : List.of("executed", "replayed")) {
            callsBefore.put(outcome, counted(outcome));
        }
    }

    @BeforeEach
    void freshKey() {
        approvalNo = "A-" + UUID.randomUUID();
        orders.state().runs.set(0);
        orders.state().reads.set(0);
        orders.state().onRun = () -> { };
        orders.state().rollbackAfterReturn.set(false);
        paymentService.charges.set(0);
        paymentService.refunds.clear();
        store.poisoned.set(false);
    }

    @AfterEach
    void unpoison() {
        store.poisoned.set(false);
    }

    static OrderRequest request(String customer) {
        return new OrderRequest(customer, List.of(
                new Line("SKU-1", 2, new BigDecimal("10.50")),
                new Line("SKU-2", 1, new BigDecimal("3.25"))));
    }

    Optional<IdempotencyRecord> record(String operation, String key) {
        return store.delegate.find(Keys.hash(operation, "", Keys.normalize(key)));
    }

    Optional<IdempotencyRecord> orderRecord() {
        return record(CREATE_ORDER, "APPROVAL:" + approvalNo + ":MAIN");
    }

    @Test
    void theFirstCallRunsAndADuplicateReplaysAnEqualResultWithoutRunning() {
        OrderReceipt first = orders.createOrder(approvalNo, request("C-1"));
        OrderReceipt second = orders.createOrder(approvalNo, request("C-1"));

        assertThat(orders.state().runs).hasValue(1);
        assertThat(orders.orderRows(approvalNo)).isEqualTo(1);
        assertThat(second).isEqualTo(first).isNotSameAs(first);
        assertThat(second.total()).isEqualTo(new BigDecimal("24.25"));
        assertThat(second.total().scale()).isEqualTo(2);
        assertThat(second.lines()).hasSize(2).allSatisfy(l -> assertThat(l).isInstanceOf(Line.class));
        assertThat(second.lines().get(0).price()).isEqualTo(new BigDecimal("10.50"));
        assertThat(orderRecord()).get().extracting(IdempotencyRecord::status)
                .isEqualTo(IdempotencyRecord.Status.COMPLETED);
    }

    @Test
    void theSameKeyWithOtherArgumentsIsRefused() {
        orders.createOrder(approvalNo, request("C-1"));

        assertThatThrownBy(() -> orders.createOrder(approvalNo, request("C-2")))
                .isInstanceOf(IdempotencyKeyReusedException.class)
                .hasMessageContaining(CREATE_ORDER)
                .hasMessageNotContaining("C-2");
        assertThat(orders.state().runs).hasValue(1);
        assertThat(orders.orderRows(approvalNo)).isEqualTo(1);
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"", "   ", "\t"})
    void aNullEmptyOrBlankKeyIsRefusedAndTheMethodDoesNotRun(String key) {
        int calls = store.calls.get();

        assertThatThrownBy(() -> orders.createWithPlainKey(key, request("C-1")))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("OrderService.createWithPlainKey(String, OrderRequest)")
                .hasMessageContaining("\"#approvalNo\"");
        assertThat(orders.state().runs).hasValue(0);
        assertThat(store.calls).hasValue(calls);
    }

    @Test
    void readOnlyNeverTouchesTheStore() {
        int calls = store.calls.get();
        store.poisoned.set(true);

        OrderReceipt a = orders.find("ORD-1");
        OrderReceipt b = orders.find("ORD-1");

        assertThat(a).isEqualTo(b);
        assertThat(orders.state().reads).hasValue(2);
        assertThat(store.calls).hasValue(calls);
    }

    @Test
    void readOnlyMethodsAreNotAdvisedAtAllSoTheyCostWhatAPlainCallCosts() throws Exception {
        org.springframework.aop.MethodMatcher matcher = IdempotentAspect.POINTCUT.getMethodMatcher();
        java.lang.reflect.Method find = OrderService.class.getMethod("find", String.class);
        java.lang.reflect.Method reserve = OrderService.class.getMethod("reserve", String.class, int.class);

        assertThat(matcher.matches(find, OrderService.class)).isFalse();
        assertThat(matcher.matches(reserve, OrderService.class)).isTrue();
    }

    @Test
    void asManyThreadsAsMayWaitOnOneKeyRunTheMethodOnceAndAllGetTheSameReceipt() throws Exception {
        // the executor lets this many callers of one key in at once; they take turns with the store, one at a time
        int threads = dev.idempotency.IdempotentExecutor.DEFAULT_MAX_WAITERS_PER_KEY;
        int claimsBefore = store.claimsStarted.get();
        // the one run waits until a duplicate has met its claim in the store, so that the calls really overlap
        orders.state().onRun = () -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (store.claimsStarted.get() - claimsBefore < 2 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
        };
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<OrderReceipt>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    return orders.createOrder(approvalNo, request("C-1"));
                }));
            }
            start.countDown();
            Set<OrderReceipt> receipts = new HashSet<>();
            for (Future<OrderReceipt> f : futures) {
                receipts.add(f.get(30, TimeUnit.SECONDS));
            }

            assertThat(store.claimsStarted.get() - claimsBefore).isGreaterThanOrEqualTo(threads);
            assertThat(orders.state().runs).hasValue(1);
            assertThat(receipts).hasSize(1);
            assertThat(orders.orderRows(approvalNo)).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aRollbackOfTheCallersTransactionLeavesNoRecordAndTheRetryRuns() {
        TransactionTemplate tx = new TransactionTemplate(transactionManager);
        OrderReceipt rolledBack = tx.execute(status -> {
            OrderReceipt r = orders.createOrder(approvalNo, request("C-1"));
            status.setRollbackOnly();
            return r;
        });

        assertThat(orderRecord()).isEmpty();
        assertThat(orders.orderRows(approvalNo)).isZero();

        OrderReceipt retried = orders.createOrder(approvalNo, request("C-1"));

        assertThat(orders.state().runs).hasValue(2);
        assertThat(retried.orderId()).isNotEqualTo(rolledBack.orderId());
        assertThat(orders.orderRows(approvalNo)).isEqualTo(1);
        assertThat(orders.createOrder(approvalNo, request("C-1"))).isEqualTo(retried);
        assertThat(orders.state().runs).hasValue(2);
    }

    @Test
    void theAdviceRunsInsideTheMethodsOwnTransactionSoItsRollbackLeavesNoRecord() {
        // no outer transaction: only the method's @Transactional; it rolls back after the method returned
        orders.state().rollbackAfterReturn.set(true);
        orders.createOrder(approvalNo, request("C-1"));

        assertThat(orders.orderRows(approvalNo)).isZero();
        assertThat(orderRecord()).isEmpty();

        orders.createOrder(approvalNo, request("C-1"));
        assertThat(orders.state().runs).hasValue(2);
        assertThat(orders.orderRows(approvalNo)).isEqualTo(1);
    }

    @Test
    void aCompensationRunsExactlyOnceWhenTheTransactionRollsBackAfterTheMethodReturned() {
        String paymentId = "P-" + UUID.randomUUID();
        TransactionTemplate tx = new TransactionTemplate(transactionManager);
        PaymentReceipt charged = tx.execute(status -> {
            PaymentReceipt r = payments.pay(paymentId, new BigDecimal("9.90"));
            status.setRollbackOnly();
            return r;
        });

        assertThat(paymentService.refunds).containsExactly(charged);
        assertThat(record("PaymentService.pay", "PAY:" + paymentId)).isEmpty();

        PaymentReceipt retried = tx.execute(status -> payments.pay(paymentId, new BigDecimal("9.90")));
        PaymentReceipt replayed = payments.pay(paymentId, new BigDecimal("9.90"));

        assertThat(paymentService.charges).hasValue(2);
        assertThat(replayed).isEqualTo(retried);
        assertThat(paymentService.refunds).containsExactly(charged);
    }

    @Test
    void aCommittedCallIsNeverCompensated() {
        String paymentId = "P-" + UUID.randomUUID();
        new TransactionTemplate(transactionManager).execute(s -> payments.pay(paymentId, BigDecimal.TEN));

        assertThat(paymentService.refunds).isEmpty();
        assertThat(record("PaymentService.pay", "PAY:" + paymentId)).isPresent();
    }

    @Test
    void aListedBusinessExceptionIsRecordedAndThrownAgainWithoutRunning() {
        String account = "ACC-" + UUID.randomUUID();

        assertThatThrownBy(() -> payments.withdraw(account, new BigDecimal("500.00")))
                .isInstanceOf(InsufficientFundsException.class).hasMessageContaining("cannot cover 500.00");
        assertThatThrownBy(() -> payments.withdraw(account, new BigDecimal("500.00")))
                .isInstanceOf(InsufficientFundsException.class).hasMessageContaining("cannot cover 500.00");

        assertThat(paymentService.charges).hasValue(1);
    }

    @Test
    void eachCallClaimsItsKeyOnceAndIsCountedOnceInTheMeters() {
        int claims = store.claimsStarted.get();

        orders.createOrder(approvalNo, request("C-1"));
        assertThat(store.claimsStarted.get() - claims).isEqualTo(1);
        orders.createOrder(approvalNo, request("C-1"));
        assertThat(store.claimsStarted.get() - claims).isEqualTo(2);

        assertThat(calls("executed")).isEqualTo(1.0);
        assertThat(calls("replayed")).isEqualTo(1.0);
    }

    /** The calls of {@code createOrder} counted with {@code outcome} since this test began. */
    private double calls(String outcome) {
        return counted(outcome) - callsBefore.getOrDefault(outcome, 0.0);
    }

    /** The counters are per operation, shared by the tests of one context: read before each test, and subtracted. */
    private double counted(String outcome) {
        return meters.find(MicrometerIdempotencyListener.CALLS).tag("operation", CREATE_ORDER)
                .tag("outcome", outcome).counters().stream().mapToDouble(c -> c.count()).sum();
    }

    @Test
    void callsThroughAnInterfaceAndOnAClassAreBothGuarded() {
        if (proxied()) {
            assertThat(AopUtils.isJdkDynamicProxy(payments)).isTrue();
            assertThat(AopUtils.isCglibProxy(orders)).isTrue();
        } else {
            // woven: nothing but the transaction advice proxies a bean, and PaymentService has no @Transactional
            assertThat(AopUtils.isAopProxy(payments)).isFalse();
        }
        String paymentId = "P-" + UUID.randomUUID();

        PaymentReceipt first = payments.pay(paymentId, BigDecimal.ONE);
        PaymentReceipt second = payments.pay(paymentId, BigDecimal.ONE);

        assertThat(second).isEqualTo(first);
        assertThat(paymentService.charges).hasValue(1);
    }

    @Test
    void aPrimitiveResultReplaysAsItsBoxedValue() {
        String sku = "SKU-" + UUID.randomUUID();
        int first = orders.reserve(sku, 7);
        int second = orders.reserve(sku, 7);

        assertThat(second).isEqualTo(first).isEqualTo(107);
        assertThat(orders.state().runs).hasValue(1);
    }
}
