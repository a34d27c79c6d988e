package dev.idempotency.web;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * The response of an idempotent request, held back (to record it before anything reaches the client) and held to at
 * most {@code limit} bytes of body: past the limit it keeps what it has and drops the rest, and says it
 * {@linkplain #overflowed() overflowed}, so that a handler writing a gigabyte costs the limit in memory, not a
 * gigabyte. The caller then records and sends nothing of it.
 */
final class CappedResponse extends ContentCachingResponseWrapper {

    private final int limit;
    private boolean overflowed;
    private @Nullable ServletOutputStream stream;
    private @Nullable PrintWriter writer;

    CappedResponse(HttpServletResponse response, int limit) {
        super(response);
        this.limit = limit;
    }

    /** Whether the handler wrote, or declared, more than the limit. */
    boolean overflowed() {
        if (writer != null) {
            writer.flush();
        }
        return overflowed;
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
        if (stream == null) {
            ServletOutputStream cached = super.getOutputStream();
            stream = new ServletOutputStream() {
                @Override
                public void write(int b) throws IOException {
                    if (room(1)) {
                        cached.write(b);
                    }
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    if (room(len)) {
                        cached.write(b, off, len);
                    }
                }

                @Override
                public boolean isReady() {
                    return cached.isReady();
                }

                @Override
                public void setWriteListener(WriteListener listener) {
                    cached.setWriteListener(listener);
                }
            };
        }
        return stream;
    }

    @Override
    public PrintWriter getWriter() throws IOException {
        if (writer == null) {
            String encoding = getCharacterEncoding();
            Charset charset = encoding == null ? StandardCharsets.ISO_8859_1 : Charset.forName(encoding);
            // through the counted stream, flushed at every write as Spring's own writer is, so that nothing waits
            // in an encoder's buffer when the body is taken
            writer = new PrintWriter(new OutputStreamWriter(getOutputStream(), charset), true) {
                @Override
                public void write(char[] buf, int off, int len) {
                    super.write(buf, off, len);
                    super.flush();
                }

                @Override
                public void write(String s, int off, int len) {
                    super.write(s, off, len);
                    super.flush();
                }

                @Override
                public void write(int c) {
                    super.write(c);
                    super.flush();
                }
            };
        }
        return writer;
    }

    private boolean room(int len) {
        if (overflowed || getContentSize() + (long) len > limit) {
            overflowed = true;
            return false;
        }
        return true;
    }

    /** A declared length is believed only within the limit: the cache would reserve that many bytes at once. */
    @Override
    public void setContentLength(int len) {
        if (len > limit) {
            overflowed = true;
        } else {
            super.setContentLength(len);
        }
    }

    @Override
    public void setContentLengthLong(long len) {
        if (len > limit) {
            overflowed = true;
        } else {
            super.setContentLengthLong(len);
        }
    }

    @Override
    public void setBufferSize(int size) {
        super.setBufferSize(Math.min(size, limit));
    }

    @Override
    public void resetBuffer() {
        super.resetBuffer();
        overflowed = false;
    }

    @Override
    public void reset() {
        super.reset();
        overflowed = false;
    }
}
