package dev.idempotency.web;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.MediaType;
import org.springframework.http.converter.FormHttpMessageConverter;
import org.springframework.util.MultiValueMap;

/**
 * A request whose body was read ahead (to fingerprint it, within the size limit) and is served again to the handler
 * from memory. A form's body ({@code application/x-www-form-urlencoded}) is served as parameters too, after the
 * query's, as the container would have: once the adapter has read the stream, the container no longer parses it.
 */
final class BufferedRequest extends HttpServletRequestWrapper {

    /** Reads form bodies: stateless once built, so one serves every request. */
    private static final FormHttpMessageConverter FORMS = new FormHttpMessageConverter();

    private final byte[] body;
    private final @Nullable Map<String, String[]> parameters;

    private BufferedRequest(HttpServletRequest request, byte[] body, @Nullable Map<String, String[]> parameters) {
        super(request);
        this.body = body;
        this.parameters = parameters;
    }

    /** A body that is not a form. */
    static BufferedRequest of(HttpServletRequest request, byte[] body) {
        return new BufferedRequest(request, body, null);
    }

    /**
     * A form's body: its parameters follow the request's own (the query's, or all of them where a filter had the
     * container parse the body before it was read here, which then reads as empty).
     */
    static BufferedRequest ofForm(HttpServletRequest request, byte[] body) throws IOException {
        Map<String, String[]> merged = new LinkedHashMap<>(request.getParameterMap());
        if (body.length > 0) {
            String encoding = request.getCharacterEncoding();
            HttpHeaders headers = new HttpHeaders();
            headers.setContentType(new MediaType(MediaType.APPLICATION_FORM_URLENCODED,
                    encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding)));
            MultiValueMap<String, String> form = FORMS.read(null, new HttpInputMessage() {
                @Override
                public InputStream getBody() {
                    return new ByteArrayInputStream(body);
                }

                @Override
                public HttpHeaders getHeaders() {
                    return headers;
                }
            });
            form.forEach((name, values) -> merged.merge(name, values.toArray(String[]::new), (query, posted) -> {
                String[] all = Arrays.copyOf(query, query.length + posted.length);
                System.arraycopy(posted, 0, all, query.length, posted.length);
                return all;
            }));
        }
        return new BufferedRequest(request, body, Collections.unmodifiableMap(merged));
    }

    @Override
    public @Nullable String getParameter(String name) {
        if (parameters == null) {
            return super.getParameter(name);
        }
        String[] values = parameters.get(name);
        return values == null || values.length == 0 ? null : values[0];
    }

    @Override
    public Map<String, String[]> getParameterMap() {
        return parameters == null ? super.getParameterMap() : parameters;
    }

    @Override
    public Enumeration<String> getParameterNames() {
        return parameters == null ? super.getParameterNames() : Collections.enumeration(parameters.keySet());
    }

    @Override
    public String @Nullable [] getParameterValues(String name) {
        if (parameters == null) {
            return super.getParameterValues(name);
        }
        String[] values = parameters.get(name);
        return values == null ? null : values.clone();
    }

    @Override
    public ServletInputStream getInputStream() {
        ByteArrayInputStream in = new ByteArrayInputStream(body);
        return new ServletInputStream() {
            @Override
            public int read() {
                return in.read();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                return in.read(b, off, len);
            }

            @Override
            public boolean isFinished() {
                return in.available() == 0;
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setReadListener(ReadListener listener) {
                throw new UnsupportedOperationException("the body of an idempotent request is read ahead; "
                        + "non-blocking reads are not supported");
            }
        };
    }

    @Override
    public BufferedReader getReader() {
        String encoding = getCharacterEncoding();
        Charset charset = encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
        return new BufferedReader(new InputStreamReader(new ByteArrayInputStream(body), charset));
    }

    @Override
    public int getContentLength() {
        return body.length;
    }

    @Override
    public long getContentLengthLong() {
        return body.length;
    }
}
