package dev.idempotency.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.idempotency.processor.Compile.compile;
import static dev.idempotency.processor.Compile.source;

import com.google.testing.compile.Compilation;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;

/** One operation name, one method: the name scopes the keys, so two methods sharing it would replay each other. */
class OperationNameRulesTest {

    @Test
    void twoMethodsSharingAnExplicitNameAreBothRefused() {
        JavaFileObject orders = source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE,
                            operation = "orders.create")
                    public void create(String no) { }
                }
                """);
        JavaFileObject legacy = source("LegacyOrders", """
                package com.example;
                import dev.idempotency.*;
                public class LegacyOrders {
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE,
                            operation = "orders.create")
                    public void insert(String no, int qty) { }
                }
                """);
        Compilation c = compile(orders, legacy);
        assertThat(c).hadErrorCount(2);
        assertThat(c).hadErrorContaining("operation \"orders.create\" of LegacyOrders.insert(String no, int qty) is"
                + " also the operation of Orders.create(String no): their keys would share one key space and replay"
                + " each other's results; give one of them its own name with operation = \"...\"")
                .inFile(legacy).onLineContaining("operation = \"orders.create\"");
        assertThat(c).hadErrorContaining("operation \"orders.create\" of Orders.create(String no) is also the"
                + " operation of LegacyOrders.insert(String no, int qty)")
                .inFile(orders).onLineContaining("operation = \"orders.create\"");
    }

    @Test
    void overloadsShareTheDefaultNameAndAreRefused() {
        JavaFileObject bad = source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE)
                    public void create(String no) { }
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE)
                    public void create(String no, int quantity) { }
                }
                """);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(2);
        assertThat(c).hadErrorContaining("operation \"Orders.create\" of Orders.create(String no, int quantity) is"
                + " also the operation of Orders.create(String no)").inFile(bad).onLineContaining("int quantity");
        assertThat(c).hadErrorContaining("operation \"Orders.create\" of Orders.create(String no) is also")
                .inFile(bad).onLineContaining("create(String no) {");
    }

    @Test
    void anExplicitNameClashingWithADefaultOneIsRefused() {
        JavaFileObject bad = source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE)
                    public void create(String no) { }
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE, operation = "Orders.create")
                    public void place(String no) { }
                }
                """);
        assertThat(compile(bad)).hadErrorCount(2);
    }

    @Test
    void distinctNamesCompile() {
        JavaFileObject good = source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE)
                    public void create(String no) { }
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE, operation = "Orders.createMany")
                    public void create(String no, int quantity) { }
                }
                """);
        assertThat(compile(good)).succeededWithoutWarnings();
    }

    /** The aspect trims the name, so " orders.create " and "orders.create" share one key space at run time. */
    @Test
    void namesAreComparedTrimmedAsTheAspectUsesThem() {
        JavaFileObject bad = source("Orders", """
                package com.example;
                import dev.idempotency.*;
                public class Orders {
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE, operation = "orders.create")
                    public void create(String no) { }
                    @Idempotent(key = "#no", tier = Tier.REVERSIBLE, operation = " orders.create ")
                    public void place(String no) { }
                }
                """);
        Compilation c = compile(bad);
        assertThat(c).hadErrorCount(2);
        assertThat(c).hadErrorContaining("operation \"orders.create\" of Orders.place(String no) is also the"
                + " operation of Orders.create(String no)").inFile(bad).onLineContaining("\" orders.create \"");
    }
}
