package dev.idempotency.processor;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import javax.annotation.processing.Filer;
import javax.tools.FileObject;
import javax.tools.StandardLocation;
import tools.jackson.core.util.DefaultIndenter;
import tools.jackson.core.util.DefaultPrettyPrinter;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes the side-effect inventory. Jackson is on the processor path anyway (through {@code idempotency-core}), so
 * the JSON is built as a tree and written by Jackson rather than by hand: escaping is Jackson's, and the run-time
 * reader ({@code IdempotencyAdmin}) parses it with the same library.
 */
final class OperationsJson {

    /** The format's version, written first so that a reader can refuse a format it does not know. */
    static final int FORMAT = 1;

    private OperationsJson() {
    }

    /** Writes {@code operations}, in their order (sorted by name), to {@code path} in the class output. */
    static void write(Filer filer, String path, Collection<OperationEntry> operations) throws IOException {
        JsonMapper mapper = JsonMapper.builder().build();
        ObjectNode root = mapper.createObjectNode();
        root.put("format", FORMAT);
        ArrayNode list = root.putArray("operations");
        for (OperationEntry op : operations) {
            ObjectNode o = list.addObject();
            o.put("operation", op.operation());
            o.put("class", op.className());
            o.put("method", op.method());
            ArrayNode parameters = o.putArray("parameterTypes");
            op.parameterTypes().forEach(parameters::add);
            o.put("returnType", op.returnType());
            o.put("tier", op.tier());
            o.put("key", op.key());
            o.put("ttl", op.ttl());
            if (op.compensate() == null) {
                o.putNull("compensate");
            } else {
                o.put("compensate", op.compensate());
            }
            o.put("lockTimeout", op.lockTimeout());
            o.put("onStoreDown", op.onStoreDown());
        }
        // a fixed line feed, so that the file is byte-for-byte the same on every platform
        DefaultPrettyPrinter pretty = new DefaultPrettyPrinter()
                .withObjectIndenter(new DefaultIndenter("  ", "\n"))
                .withArrayIndenter(new DefaultIndenter("  ", "\n"));
        byte[] json = (mapper.writer().with(pretty).writeValueAsString(root) + "\n").getBytes(StandardCharsets.UTF_8);
        FileObject file = filer.createResource(StandardLocation.CLASS_OUTPUT, "", path);
        try (OutputStream out = file.openOutputStream()) {
            out.write(json);
        }
    }
}
