package dev.idempotency.faults;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The child JVM of the crash test: joins the parent's database and tables, calls {@code send} or {@code reserve}
 * with a key, and prints {@code effect <value>} when the method acts and {@code claimed} when it is held after
 * acting, between its claim and its record. It then waits (at most five minutes) to be destroyed by its parent.
 *
 * <p>Arguments: kind url idempotencyTable businessTable accountsTable operation key.
 */
public final class ChildCaller {

    private ChildCaller() {
    }

    public static void main(String[] args) {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        FaultDatabase.Kind kind = FaultDatabase.Kind.valueOf(args[0]);
        Tables tables = new Tables(args[2], args[3], args[4]);
        String operation = args[5];
        String key = args[6];
        FaultDatabase database = FaultDatabase.attach(kind, args[1], tables, 4);
        History history = new History();
        history.listener(e -> {
            if (e.type() == History.Type.EFFECT) {
                out.println("effect " + e.value());
            }
        });
        Pauses pauses = new Pauses();
        String prefix = operation.equals("send") ? "SEND:" : "RESERVE:";
        pauses.register(prefix + key, 300_000);
        pauses.onEnter(() -> out.println("claimed"));
        FaultApp app = FaultApp.start(new FaultInjector(database), tables, history, pauses,
                FaultApp.Options.node("child"));
        out.println("started");
        String result = operation.equals("send") ? app.shop.send(key) : app.shop.reserve(key);
        out.println("returned " + result); // never reached: the parent destroys this JVM first
    }
}
