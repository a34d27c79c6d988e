package dev.idempotency.mcp;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.JSONRPCMessage;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * An in-process MCP connection for tests: every message goes through JSON text, as on a wire, and each client
 * connection carries a transport context of its own (the principal an HTTP transport's context extractor would put
 * there). Server requests are handled concurrently, as over HTTP.
 */
final class InMemoryTransport implements McpServerTransportProvider {

    private final McpJsonMapper json;
    private final List<McpServerSession> sessions = new CopyOnWriteArrayList<>();
    private volatile McpServerSession.Factory factory;

    InMemoryTransport(McpJsonMapper json) {
        this.json = json;
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory factory) {
        this.factory = factory;
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        return Flux.fromIterable(sessions).flatMap(s -> s.sendNotification(method, params)).then();
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Flux.fromIterable(sessions).flatMap(McpServerSession::closeGracefully).then();
    }

    /** A client connection whose every request carries {@code context}. */
    McpClientTransport client(McpTransportContext context) {
        return new ClientSide(context);
    }

    private JSONRPCMessage wire(JSONRPCMessage message) {
        try {
            return McpSchema.deserializeJsonRpcMessage(json, json.writeValueAsString(message));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private final class ClientSide implements McpClientTransport {
        private final McpTransportContext context;
        private volatile Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler;
        private volatile McpServerSession session;

        ClientSide(McpTransportContext context) {
            this.context = context;
        }

        @Override
        public Mono<Void> connect(Function<Mono<JSONRPCMessage>, Mono<JSONRPCMessage>> handler) {
            this.handler = handler;
            this.session = factory.create(new ServerSide(this));
            sessions.add(session);
            return Mono.empty();
        }

        @Override
        public Mono<Void> sendMessage(JSONRPCMessage message) {
            JSONRPCMessage copy = wire(message);
            return Mono.fromRunnable(() -> session.handle(copy)
                    .contextWrite(c -> c.put(McpTransportContext.KEY, context))
                    .subscribeOn(Schedulers.boundedElastic())
                    .subscribe());
        }

        void receive(JSONRPCMessage message) {
            handler.apply(Mono.just(message)).subscribeOn(Schedulers.boundedElastic()).subscribe();
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> type) {
            return json.convertValue(data, type);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return Mono.fromRunnable(() -> sessions.remove(session));
        }
    }

    private final class ServerSide implements McpServerTransport {
        private final ClientSide client;

        ServerSide(ClientSide client) {
            this.client = client;
        }

        @Override
        public Mono<Void> sendMessage(JSONRPCMessage message) {
            JSONRPCMessage copy = wire(message);
            return Mono.fromRunnable(() -> client.receive(copy));
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> type) {
            return json.convertValue(data, type);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return Mono.empty();
        }
    }
}
