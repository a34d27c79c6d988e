package dev.idempotency.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.Tier;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

class KeyResolverTest {

    public record Customer(String id, List<String> tags) {
    }

    /** A POJO with a getter, a public field-less property and a mutator that must never be reachable. */
    public static class Order {
        private String number;
        private final Map<String, String> attributes;

        public Order(String number, Map<String, String> attributes) {
            this.number = number;
            this.attributes = attributes;
        }

        public String getNumber() {
            return number;
        }

        public void setNumber(String number) {
            this.number = number;
        }

        public Map<String, String> getAttributes() {
            return attributes;
        }
    }

    @SuppressWarnings("unused")
    static void target(String approvalNo, Customer customer, Order order, long amount) {
    }

    static final Method TARGET;

    static {
        try {
            TARGET = KeyResolverTest.class.getDeclaredMethod("target", String.class, Customer.class, Order.class,
                    long.class);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Object[] args = {"A-1", new Customer("C-7", List.of("vip")), new Order("O-9", Map.of("region", "EU")), 42L};

    String resolve(KeyResolver resolver, String expression) {
        return resolver.compile(TARGET, expression, "target key \"" + expression + "\"").resolve(args);
    }

    String resolve(String expression) {
        return resolve(KeyResolver.create(), expression);
    }

    @Test
    void parametersByNameByPositionAndRootArgs() {
        assertThat(resolve("'APPROVAL:' + #approvalNo + ':MAIN'")).isEqualTo("APPROVAL:A-1:MAIN");
        assertThat(resolve("#p0 + #a1.id")).isEqualTo("A-1C-7");
        assertThat(resolve("#root.args[0]")).isEqualTo("A-1");
    }

    @Test
    void recordComponentsPojoGettersCollectionsAndMaps() {
        assertThat(resolve("#customer.id()")).isEqualTo("C-7");
        assertThat(resolve("#customer.id")).isEqualTo("C-7");
        assertThat(resolve("#customer.tags[0]")).isEqualTo("vip");
        assertThat(resolve("#order.number")).isEqualTo("O-9");
        assertThat(resolve("#order.attributes['region']")).isEqualTo("EU");
    }

    @Test
    void aValueThatIsNotAStringIsConvertedWithToString() {
        assertThat(resolve("#amount")).isEqualTo("42");
        assertThat(resolve("#amount * 2")).isEqualTo("84");
    }

    @Test
    void anExpressionIsParsedOnceAndEvaluatedForEachCall() {
        KeyResolver.Key key = KeyResolver.create().compile(TARGET, "#approvalNo", "target");
        for (int i = 0; i < 300; i++) {
            assertThat(key.resolve(new Object[] {"K" + i, null, null, 0L})).isEqualTo("K" + i);
        }
    }

    @Test
    void propertiesAreReadOnlyAndNothingIsAssigned() {
        assertThatThrownBy(() -> resolve("#order.number = 'X'"))
                .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("may not assign");
        assertThatThrownBy(() -> resolve("#amount++"))
                .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("may not assign");
        assertThat(((Order) args[2]).getNumber()).isEqualTo("O-9");
    }

    @Test
    void objectClassAndClassLoaderMethodsAreOutOfReach() {
        assertThatThrownBy(() -> resolve("#customer.getClass().getClassLoader()"))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("getClass()");
        assertThatThrownBy(() -> resolve("#customer.class.name"))
                .isInstanceOf(IdempotencyKeyException.class);
    }

    @Test
    void nullEmptyAndBlankValuesAreRefusedNamingTheExpression() {
        Object[] blank = {" ", null, null, 0L};
        KeyResolver.Key key = KeyResolver.create().compile(TARGET, "#approvalNo", "target key \"#approvalNo\"");
        assertThatThrownBy(() -> key.resolve(blank)).isInstanceOf(IdempotencyKeyException.class)
                .hasMessage("target key \"#approvalNo\": the key is blank");
        assertThatThrownBy(() -> key.resolve(new Object[] {"", null, null, 0L}))
                .hasMessage("target key \"#approvalNo\": the key is empty");
        assertThatThrownBy(() -> key.resolve(new Object[] {null, null, null, 0L}))
                .hasMessageStartingWith("target key \"#approvalNo\": the key expression reads #approvalNo, which is"
                        + " null in this call");
    }

    @Test
    void optingInReachesTypesConstructorsAndBeans() {
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        beans.registerSingleton("region", "EU");
        KeyResolver open = KeyResolver.builder().allowTypeReferences().allowConstructors()
                .allowBeanReferences(beans).build();

        assertThat(resolve(open, "T(java.lang.Math).abs(-#amount)")).isEqualTo("42");
        assertThat(resolve(open, "new java.math.BigDecimal(#amount).negate()")).isEqualTo("-42");
        assertThat(resolve(open, "#approvalNo + @region")).isEqualTo("A-1EU");

        KeyResolver typesOnly = KeyResolver.builder().allowTypeReferences().build();
        assertThatThrownBy(() -> resolve(typesOnly, "@region"))
                .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("bean references");
        assertThatThrownBy(() -> resolve(typesOnly, "new java.io.File('x')"))
                .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("constructors");
    }

    // ---- issue 10 item 8: a key built from a missing value is refused, naming the variable ----

    private String resolveWith(String expression, Object... arguments) {
        return KeyResolver.create().compile(TARGET, expression, "target key \"" + expression + "\"")
                .resolve(arguments);
    }

    @Test
    void aNullVariableIsAKeyExceptionNamingTheMethodTheExpressionAndTheVariable() {
        assertThatThrownBy(() -> resolveWith("'ORDER:' + #approvalNo", null, null, null, 0L))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageStartingWith("target key \"'ORDER:' + #approvalNo\": the key expression reads #approvalNo,"
                        + " which is null in this call");
        // positions and #root.args too
        assertThatThrownBy(() -> resolveWith("'ORDER:' + #p0", null, null, null, 0L))
                .hasMessageContaining("reads #p0, which is null");
        assertThatThrownBy(() -> resolveWith("'ORDER:' + #root.args[1]", "A-1", null, null, 0L))
                .hasMessageContaining("reads #root.args[1], which is null");
    }

    @Test
    void aNullPropertyOnThePathIsRefusedNamingTheFirstNullStep() {
        assertThatThrownBy(() -> resolveWith("'C:' + #customer.id", "A-1", null, null, 0L))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageContaining("reads #customer, which is null");
        assertThatThrownBy(() -> resolveWith("'C:' + #customer.id", "A-1", new Customer(null, List.of()), null, 0L))
                .hasMessageContaining("reads #customer.id, which is null");
        assertThatThrownBy(() -> resolveWith("#order.attributes['region'] + ':' + #approvalNo", "A-1", null,
                new Order("O-1", java.util.Collections.singletonMap("region", null)), 0L))
                .hasMessageContaining("reads #order.attributes['region'], which is null");
        assertThatThrownBy(() -> resolveWith("#customer.tags[0] + 'x'", "A-1", new Customer("C", null), null, 0L))
                .hasMessageContaining("reads #customer.tags, which is null");
    }

    @Test
    void anExpressionThatHandlesNullItselfIsLeftToItsOwnWord() {
        assertThat(resolveWith("#approvalNo ?: 'none'", null, null, null, 0L)).isEqualTo("none");
        assertThat(resolveWith("'C:' + #customer?.id", "A-1", null, null, 0L)).isEqualTo("C:null");
        assertThat(resolveWith("#approvalNo == null ? 'anon' : #approvalNo", null, null, null, 0L))
                .isEqualTo("anon");
        assertThat(resolveWith("#customer.id != null ? #customer.id : #approvalNo", "A-1",
                new Customer(null, List.of()), null, 0L)).isEqualTo("A-1");
        // but what the null-safe path does not cover is still checked
        assertThatThrownBy(() -> resolveWith("#customer?.id + #approvalNo", null, null, null, 0L))
                .hasMessageContaining("reads #approvalNo, which is null");
    }

    @Test
    void nullArgumentsThatTheKeyDoesNotReadAreFine() {
        assertThat(resolveWith("'ORDER:' + #approvalNo", "A-1", null, null, 0L)).isEqualTo("ORDER:A-1");
        assertThat(resolveWith("#customer.tags.?[#this != null].size() + ':' + #approvalNo", "A-1",
                new Customer("C", java.util.Arrays.asList("a", null)), null, 0L)).isEqualTo("1:A-1");
    }

    // ---- issue 16 item 7: a key expression may only read ----

    /** Mutable arguments, to see that no key expression can change them. */
    public static class Account {
        private String id = "ACC-1";
        public final java.util.List<String> log = new java.util.ArrayList<>(List.of("opened"));

        public String getId() {
            return id;
        }

        public void setId(String id) {
            this.id = id;
        }

        public String rename(String id) {
            this.id = id;
            return id;
        }

        public boolean isOpen() {
            return true;
        }
    }

    @SuppressWarnings("unused")
    static void account(Account p0, java.util.List<String> p1, java.util.Map<String, String> p2) {
    }

    @Test
    void aKeyExpressionCannotMutateTheArguments() throws Exception {
        Method method = KeyResolverTest.class.getDeclaredMethod("account", Account.class, java.util.List.class,
                java.util.Map.class);
        Account account = new Account();
        java.util.List<String> list = new java.util.ArrayList<>(List.of("a", "b"));
        java.util.Map<String, String> map = new java.util.HashMap<>(Map.of("k", "v"));
        Object[] arguments = {account, list, map};
        for (String expression : new String[] {"#p0.setId('x') + 'k'", "#p1.clear()", "#p0.rename('x')",
                "#p1.add('c') + 'k'", "#p2.put('k', 'w')", "#p0.log.clear()", "#p1.remove(0)", "#p2.clear()"}) {
            assertThatThrownBy(() -> KeyResolver.create().compile(method, expression, "account key")
                    .resolve(arguments))
                    .as(expression)
                    .isInstanceOf(IdempotencyKeyException.class)
                    .hasMessageContaining("may only read");
        }
        assertThat(account.getId()).isEqualTo("ACC-1");
        assertThat(account.log).containsExactly("opened");
        assertThat(list).containsExactly("a", "b");
        assertThat(map).containsExactly(Map.entry("k", "v"));
    }

    @Test
    void gettersRecordAccessorsAndStringAndNumberMethodsStillWork() throws Exception {
        assertThat(resolve("#customer.id().toUpperCase() + #order.getNumber().substring(1)")).isEqualTo("C-7-9");
        assertThat(resolve("#approvalNo.replace('-', '') + #amount.toString()")).isEqualTo("A142");
        assertThat(resolve("#amount.compareTo(41L) + ':' + #approvalNo.length()")).isEqualTo("1:3");
        Method method = KeyResolverTest.class.getDeclaredMethod("account", Account.class, java.util.List.class,
                java.util.Map.class);
        assertThat(KeyResolver.create().compile(method, "#p0.isOpen() + ':' + #p0.getId()", "account key")
                .resolve(new Object[] {new Account(), List.of(), Map.of()})).isEqualTo("true:ACC-1");
    }

    @Test
    void optingInToTypeReferencesAllowsStaticMethodsButStillNoMutation() throws Exception {
        KeyResolver open = KeyResolver.builder().allowTypeReferences().build();
        Method method = KeyResolverTest.class.getDeclaredMethod("account", Account.class, java.util.List.class,
                java.util.Map.class);
        java.util.List<String> list = new java.util.ArrayList<>(List.of("a"));
        assertThat(open.compile(method, "T(java.lang.String).valueOf(#p1.size() > 0)", "k")
                .resolve(new Object[] {new Account(), list, Map.of()})).isEqualTo("true");
        assertThatThrownBy(() -> open.compile(method, "#p1.clear()", "k").resolve(new Object[] {new Account(), list,
                Map.of()})).hasMessageContaining("may only read");
        assertThat(list).containsExactly("a");
    }

    /** A plain object whose toString() is Object's: "Pojo@1b6d3586", another text for every instance. */
    public static class Pojo {
        public String getId() {
            return "P-1";
        }
    }

    @SuppressWarnings("unused")
    static void keyed(Pojo pojo, String text) {
    }

    static final class Throwing {
        @Override
        public String toString() {
            throw new IllegalStateException("no text today");
        }
    }

    @SuppressWarnings("unused")
    static void throwing(Throwing value) {
    }

    @Test
    void aValueWithoutItsOwnToStringIsRefusedNamingItsType() throws Exception {
        Method keyed = KeyResolverTest.class.getDeclaredMethod("keyed", Pojo.class, String.class);
        Object[] call = {new Pojo(), "abc"};
        KeyResolver resolver = KeyResolver.create();
        assertThatThrownBy(() -> resolver.compile(keyed, "#pojo", "keyed key \"#pojo\"").resolve(call))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessage("keyed key \"#pojo\": the key is a " + Pojo.class.getName() + ", which has no toString()"
                        + " of its own: its text names the instance, a new key at every call; key on its fields, e.g."
                        + " #order.id");
        assertThatThrownBy(() -> resolver.compile(keyed, "#root.args", "keyed key \"#root.args\"").resolve(call))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessageStartingWith("keyed key \"#root.args\": the key is a java.lang.Object[] (an array)");
        assertThatThrownBy(() -> resolver.compile(keyed, "#text.bytes", "keyed").resolve(call))
                .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("the key is a byte[] (an array)");
        // the same call, twice: the check is per class and cached, and a property of the object is a fine key
        assertThatThrownBy(() -> resolver.compile(keyed, "#pojo", "keyed").resolve(call))
                .isInstanceOf(IdempotencyKeyException.class);
        assertThat(resolver.compile(keyed, "#pojo.id", "keyed").resolve(call)).isEqualTo("P-1");
        assertThat(resolver.compile(keyed, "#root.args[1]", "keyed").resolve(call)).isEqualTo("abc");
    }

    @Test
    void aToStringThatThrowsIsAKeyException() throws Exception {
        Method throwing = KeyResolverTest.class.getDeclaredMethod("throwing", Throwing.class);
        assertThatThrownBy(() -> KeyResolver.create().compile(throwing, "#value", "throwing key \"#value\"")
                .resolve(new Object[] {new Throwing()}))
                .isInstanceOf(IdempotencyKeyException.class)
                .hasMessage("throwing key \"#value\": the key's toString() failed: java.lang.IllegalStateException:"
                        + " no text today")
                .hasCauseInstanceOf(IllegalStateException.class);
    }

    @Test
    void constructorsAloneConstructButTypeReferencesStayRefused() {
        KeyResolver constructorsOnly = KeyResolver.builder().allowConstructors().build();
        assertThat(resolve(constructorsOnly, "new java.math.BigDecimal(#amount).negate()")).isEqualTo("-42");
        assertThatThrownBy(() -> resolve(constructorsOnly, "T(java.lang.Math).abs(-#amount)"))
                .isInstanceOf(IdempotencyKeyException.class).hasMessageContaining("type references");
    }

    @Test
    void theRootObjectIsReadableThoughItsTypeIsNotPublic() {
        assertThat(KeyResolver.Root.class.getModifiers() & java.lang.reflect.Modifier.PUBLIC).isZero();
        assertThat(resolve("#root.args[0] + #root.getArgs()[3]")).isEqualTo("A-142");
        assertThat(resolve(KeyResolver.builder().allowConstructors().build(), "#root.args[1].id")).isEqualTo("C-7");
    }

    @SuppressWarnings("unused")
    static void joined(Object first, Object p1, Object third) {
    }

    /**
     * A key of literals and parameters joined with {@code +} (or a lone parameter) is built without SpEL's
     * interpreter: the key, and the error when there is one, must be what SpEL gives. SpEL's answer is had from the
     * same expression as a ternary's branch, which the shortcut leaves to SpEL.
     */
    @Test
    void joinedLiteralsAndParametersGiveWhatSpelGives() throws Exception {
        Method joined = KeyResolverTest.class.getDeclaredMethod("joined", Object.class, Object.class, Object.class);
        KeyResolver resolver = KeyResolver.create();
        List<String> expressions = List.of("'ORDER:' + #first", "'A' + 'B' + #first + ':' + #third + ''",
                "'X:' + #p0 + #a2", "'Y:' + #p1", "'it''s ' + #first", "#first", "#p1");
        Object[][] calls = {
            {"k-1", "two", 3L}, {42L, -7, Integer.MIN_VALUE}, {null, "two", "three"}, {"k", "two", null},
            {1.5, 2.5f, java.math.BigDecimal.ONE}, {Tier.REVERSIBLE, java.util.UUID.fromString(
                    "00000000-0000-0000-0000-000000000001"), 'c'}, {"x".repeat(100_000), "y", "z"},
            {new Object(), new int[] {1}, List.of(1, 2)}, {"", " ", "\t"}, {"only one"}, {},
        };
        for (String expression : expressions) {
            KeyResolver.Key shortcut = resolver.compile(joined, expression, "joined");
            KeyResolver.Key spel = resolver.compile(joined, "true ? (" + expression + ") : ''", "joined");
            assertThat(shortcut.joinsWithoutSpel()).as(expression).isTrue();
            assertThat(spel.joinsWithoutSpel()).isFalse();
            for (Object[] call : calls) {
                String expected;
                try {
                    expected = spel.resolve(call);
                } catch (IdempotencyKeyException e) {
                    assertThatThrownBy(() -> shortcut.resolve(call)).as(expression + " " + java.util.Arrays.toString(call))
                            .isInstanceOf(IdempotencyKeyException.class)
                            .hasMessage(e.getMessage().replace("true ? (" + expression + ") : ''", expression));
                    continue;
                }
                assertThat(shortcut.resolve(call)).as(expression + " " + java.util.Arrays.toString(call))
                        .isEqualTo(expected);
            }
        }
    }
}
