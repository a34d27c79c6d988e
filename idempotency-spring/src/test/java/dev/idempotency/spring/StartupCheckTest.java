package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.IdempotencyScope;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.Tier;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.internal.ProxyReach;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.lang.reflect.Type;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * What the startup check of {@code @EnableIdempotency} refuses (each case used to fail silently, or at the first
 * call), what it warns about, and what it builds ahead of the first call.
 */
class StartupCheckTest {

    /** A store and nothing else: the base of each context below. */
    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class Base {
        @Bean
        InMemoryIdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }
    }

    public static class Orders {
        static final AtomicInteger RUNS = new AtomicInteger();

        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        public String create(String id) {
            return "order " + id + " #" + RUNS.incrementAndGet();
        }
    }

    private static AnnotationConfigApplicationContext start(Class<?>... configuration) {
        return new AnnotationConfigApplicationContext(configuration);
    }

    // ---- two scopes, two gates (issue 16, item 1) --------------------------------------------------------------

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, Orders.class})
    static class TwoScopes {
        @Bean
        IdempotencyScope tenantScope() {
            return () -> "tenant";
        }

        @Bean
        IdempotencyScope principalScope() {
            return () -> "principal";
        }
    }

    @Test
    void twoScopeBeansAndNoPrimaryFailStartupNamingBoth() {
        assertThatThrownBy(() -> start(TwoScopes.class).close())
                .hasStackTraceContaining("found 2 IdempotencyScope beans (tenantScope, principalScope) and none is"
                        + " @Primary: the executor would run with none of them, and one tenant's key could replay"
                        + " another tenant's result");
    }

    @Configuration(proxyBeanMethods = false)
    @Import(TwoScopes.class)
    static class TwoScopesOnePrimary {
        @Bean
        @Primary
        IdempotencyScope primaryScope() {
            return () -> "primary";
        }
    }

    @Test
    void aPrimaryScopeAmongSeveralIsTheOneUsed() {
        try (var ctx = start(TwoScopesOnePrimary.class)) {
            ctx.getBean(Orders.class).create("P1");
            assertThat(ctx.getBean(InMemoryIdempotencyStore.class)
                    .find(dev.idempotency.internal.Keys.hash("Orders.create", "primary", "P1"))).isPresent();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, Orders.class})
    static class TwoGates {
        @Bean
        ConfirmationGate fourEyes() {
            return call -> { };
        }

        @Bean
        ConfirmationGate managerApproval() {
            return call -> { };
        }
    }

    @Test
    void twoConfirmationGatesAndNoPrimaryFailStartupNamingBoth() {
        assertThatThrownBy(() -> start(TwoGates.class).close())
                .hasStackTraceContaining("found 2 ConfirmationGate beans (fourEyes, managerApproval) and none is"
                        + " @Primary: the executor would run with none of them, and an IRREVERSIBLE call would run"
                        + " unconfirmed");
    }

    // ---- one operation name, two methods (issue 16 item 10, issue 10 item 8) -----------------------------------

    static class Billing {
        public static class Orders {
            @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
            public String create(String id) {
                return "billing " + id;
            }
        }
    }

    static class Shipping {
        public static class Orders {
            @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
            public String create(String id) {
                return "shipping " + id;
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, Billing.Orders.class, Shipping.Orders.class})
    static class SameSimpleName {
    }

    @Test
    void twoClassesOfOneSimpleNameFailStartupNamingBothMethods() {
        assertThatThrownBy(() -> start(SameSimpleName.class).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("operation \"Orders.create\" of ")
                .hasMessageContaining(Billing.Orders.class.getName() + ".create(String)")
                .hasMessageContaining(Shipping.Orders.class.getName() + ".create(String)")
                .hasMessageContaining("give one of them its own name with operation = \"...\"");
    }

    public interface Gateway {
        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        String charge(String id);
    }

    public static class CardGateway implements Gateway {
        @Override
        public String charge(String id) {
            return "card " + id;
        }
    }

    public static class BankGateway implements Gateway {
        @Override
        public String charge(String id) {
            return "bank " + id;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, CardGateway.class, BankGateway.class})
    static class OneInterfaceTwoImplementations {
    }

    @Test
    void implementationsOfOneAnnotatedInterfaceMethodAreOneOperation() {
        try (var ctx = start(OneInterfaceTwoImplementations.class)) {
            assertThat(ctx.getBeansOfType(Gateway.class)).hasSize(2);
        }
    }

    // ---- methods a proxy cannot reach (issue 17) ----------------------------------------------------------------

    public static class PrivateMethod {
        public String run(String id) {
            return create(id);
        }

        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        private String create(String id) {
            return id;
        }
    }

    public static class FinalMethod {
        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        public final String create(String id) {
            return id;
        }
    }

    public static class StaticMethod {
        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        public static String create(String id) {
            return id;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, PrivateMethod.class, FinalMethod.class, StaticMethod.class})
    static class Unreachable {
    }

    @Test
    void methodsAProxyCannotReachFailStartupWithTheProcessorsOwnSentence() {
        String fix = "; or weave it with AspectJ";
        assertThatThrownBy(() -> start(Unreachable.class).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("(3 problems)")
                .hasMessageContaining(ProxyReach.privateMethod("PrivateMethod.create", fix))
                .hasMessageContaining(ProxyReach.finalMethod("FinalMethod.create", fix))
                .hasMessageContaining(ProxyReach.staticMethod("StaticMethod.create", fix));
    }

    /** What the AspectJ weaver leaves in a class it wove: the weaver, not a proxy, applies the advice there. */
    public static class Woven {
        @SuppressWarnings("unused")
        private static final Object ajc$tjp_0 = null;

        public String run(String id) {
            return create(id);
        }

        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        private String create(String id) {
            return id;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, Woven.class})
    static class WithWovenClass {
    }

    @Test
    void withAspectJWeavingTheReachabilityRulesFollowTheWeaver() {
        try (LogLines log = LogLines.open(); var ctx = start(WithWovenClass.class)) {
            assertThat(ctx.getBean(Woven.class).run("W1")).isEqualTo("W1");
            assertThat(log.containing("on its own bean")).isEmpty();
            assertThat(log.containing("Idempotency: store ")).singleElement().satisfies(line -> assertThat(line)
                    .endsWith(", AspectJ-woven classes 1"));
        }
    }

    @Test
    void aBeanRegisteredAsAReadyInstanceIsNotProxiedAndFailsStartup() {
        var ctx = new AnnotationConfigApplicationContext();
        ctx.register(Base.class);
        ctx.getBeanFactory().registerSingleton("readyOrders", new Orders());
        assertThatThrownBy(ctx::refresh)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@Idempotent on Orders.create is never applied: bean 'readyOrders' is not"
                        + " proxied by the idempotency advice");
        ctx.close();
    }

    public interface Named {
        String name();
    }

    /** Proxied through its interface: create is on no interface, so no caller can reach it through the bean. */
    public static class OffTheInterface implements Named {
        @Override
        public String name() {
            return "x";
        }

        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        public String create(String id) {
            return id;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, OffTheInterface.class})
    static class InterfaceProxy {
    }

    @Test
    void aMethodNoInterfaceOfAnInterfaceProxyDeclaresFailsStartup() {
        assertThatThrownBy(() -> start(InterfaceProxy.class).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@Idempotent on OffTheInterface.create is never applied: bean"
                        + " '" + OffTheInterface.class.getName() + "' is an interface proxy and none of its"
                        + " interfaces declares create");
    }

    // ---- @Transactional without transactions (issue 17) --------------------------------------------------------

    public static class TransactionalOrders {
        static final AtomicInteger RUNS = new AtomicInteger();

        @Transactional
        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        public String create(String id) {
            RUNS.incrementAndGet();
            return id;
        }

        @Transactional(propagation = Propagation.SUPPORTS)
        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        public String look(String id) {
            return id;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, TransactionalOrders.class})
    static class NoTransactionManagement {
    }

    public static class JakartaTransactionalOrders {
        @jakarta.transaction.Transactional
        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        public String create(String id) {
            return id;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, JakartaTransactionalOrders.class})
    static class JakartaWithoutTransactionManagement {
    }

    @Test
    void jakartaTransactionalIsReadAsSpringsOwn() {
        assertThatThrownBy(() -> start(JakartaWithoutTransactionManagement.class).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("JakartaTransactionalOrders.create(String) is @Transactional, but the"
                        + " application context has no transaction advice");
    }

    @Test
    void transactionalWithoutAnyTransactionAdviceFailsStartupNamingTheMissingPieces() {
        assertThatThrownBy(() -> start(NoTransactionManagement.class).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("(1 problem)")
                .hasMessageContaining("TransactionalOrders.create(String) is @Transactional, but the application"
                        + " context has no transaction advice")
                .hasMessageContaining("a PlatformTransactionManager")
                .hasMessageContaining("@EnableTransactionManagement");
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    @Import({Base.class, TransactionalOrders.class})
    static class WithTransactionManagement {
        @Bean(destroyMethod = "shutdown")
        EmbeddedDatabase dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Test
    void transactionalWithTransactionAdviceStartsAndRuns() {
        try (var ctx = start(WithTransactionManagement.class)) {
            assertThat(ctx.getBean(TransactionalOrders.class).create("T1")).isEqualTo("T1");
        }
    }

    @Test
    void aTransactionalMethodThatReachesTheAdviceWithNoTransactionFailsBeforeItRuns() {
        ProxyFactory factory = new ProxyFactory(new TransactionalOrders());
        factory.setProxyTargetClass(true);
        factory.addAdvice(new IdempotentAspect(IdempotentExecutor.builder(new InMemoryIdempotencyStore())
                .transactions(SpringTransactionBridge.INSTANCE).build()));
        TransactionalOrders orders = (TransactionalOrders) factory.getProxy();
        int before = TransactionalOrders.RUNS.get();

        assertThatThrownBy(() -> orders.create("T2"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("TransactionalOrders.create(String) is @Transactional but no transaction is"
                        + " active when @Idempotent runs")
                .hasMessageContaining("the method did not run")
                .hasMessageContaining("PlatformTransactionManager")
                .hasMessageContaining("@EnableTransactionManagement");
        assertThat(TransactionalOrders.RUNS.get()).isEqualTo(before);
        // SUPPORTS asks for no transaction: it runs without one
        assertThat(orders.look("T3")).isEqualTo("T3");
    }

    // ---- the JDBC store's table ---------------------------------------------------------------------------------

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    @Import(Orders.class)
    static class JdbcWithoutTable {
        @Bean(destroyMethod = "shutdown")
        EmbeddedDatabase dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
        }

        @Bean
        JdbcIdempotencyStore store(DataSource dataSource) {
            return JdbcIdempotencyStore.builder(dataSource).build();
        }
    }

    @Test
    void aJdbcStoreWithoutItsTableFailsStartupWithTheScriptToRun() {
        assertThatThrownBy(() -> start(JdbcWithoutTable.class).close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the table idempotency_record does not exist")
                .hasMessageContaining("create it with the script dev/idempotency/jdbc/schema-h2.sql")
                .hasMessageContaining("idempotency.jdbc.initialize-schema=always");
    }

    // ---- descriptors built at startup ---------------------------------------------------------------------------

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, Orders.class})
    static class CountingCodec {
        static final List<Type> CHECKED = new CopyOnWriteArrayList<>();

        @Bean
        ResultCodec codec() {
            ResultCodec jackson = JacksonResultCodec.create();
            return new ResultCodec() {
                @Override
                public byte[] encode(Object value, Type declaredType) {
                    return jackson.encode(value, declaredType);
                }

                @Override
                public Object decode(byte[] data, Type declaredType) {
                    return jackson.decode(data, declaredType);
                }

                @Override
                public void checkReplayable(Type declaredType) {
                    CHECKED.add(declaredType);
                    jackson.checkReplayable(declaredType);
                }
            };
        }
    }

    @Test
    void eachMethodIsPreparedAtStartupSoThatTheFirstCallPaysNothing() {
        CountingCodec.CHECKED.clear();
        try (var ctx = start(CountingCodec.class)) {
            assertThat(CountingCodec.CHECKED).containsExactly(String.class);
            ctx.getBean(Orders.class).create("E1");
            assertThat(CountingCodec.CHECKED).containsExactly(String.class);
        }
    }

    // ---- self-invocation, found in the byte code -----------------------------------------------------------------

    public static class SelfCalling {
        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        public String create(String id) {
            return id;
        }

        public String createTwice(String id) {
            return create(id) + create(id + "-2");
        }

        public java.util.function.Function<String, String> reference() {
            return this::create;
        }

        public String unrelated(String id) {
            return id.trim();
        }
    }

    public static class CallsSuper extends Orders {
        @Override
        public String create(String id) {
            return super.create(id);
        }
    }

    @Test
    void aCallOfAnIdempotentMethodFromItsOwnClassIsFoundWithTheFix() {
        var found = SelfInvocations.find(SelfCalling.class,
                IdempotencyStartupCheck.idempotentMethods(SelfCalling.class));
        assertThat(found).hasSize(2);
        assertThat(found).anySatisfy(s -> assertThat(s).startsWith("SelfCalling.createTwice(String) calls"
                + " @Idempotent SelfCalling.create(String) on its own bean: a call through 'this' does not pass the"
                + " proxy, so it runs unguarded").contains("@Lazy @Autowired SelfCalling self"));
        assertThat(found).anySatisfy(s -> assertThat(s).startsWith("SelfCalling.reference() calls @Idempotent"
                + " SelfCalling.create(String)"));
        // super.create(...) in an override runs under the advice of the outer call: not a self-invocation
        assertThat(SelfInvocations.find(CallsSuper.class, IdempotencyStartupCheck.idempotentMethods(CallsSuper.class)))
                .isEmpty();
        assertThat(SelfInvocations.find(Orders.class, IdempotencyStartupCheck.idempotentMethods(Orders.class)))
                .isEmpty();
    }

    @Configuration(proxyBeanMethods = false)
    @Import({Base.class, SelfCalling.class})
    static class WithSelfCalling {
    }

    @Test
    void aSelfInvocationIsAWarningAtStartupNotAFailure() {
        try (LogLines log = LogLines.open(); var ctx = start(WithSelfCalling.class)) {
            assertThat(ctx.getBean(SelfCalling.class).create("S1")).isEqualTo("S1");
            assertThat(log.containing("calls @Idempotent SelfCalling.create(String) on its own bean"))
                    .hasSize(2).allSatisfy(line -> assertThat(line).startsWith("WARN "));
            assertThat(log.containing("Idempotency: store ")).singleElement().satisfies(line -> assertThat(line)
                    .contains("; operations 1; advice proxy"));
        }
    }
}
