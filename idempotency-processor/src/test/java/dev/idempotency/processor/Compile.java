package dev.idempotency.processor;

import com.google.testing.compile.Compilation;
import com.google.testing.compile.Compiler;
import com.google.testing.compile.JavaFileObjects;
import java.util.ArrayList;
import java.util.List;
import javax.tools.JavaFileObject;

/**
 * Compiles test sources with the processor, with the lint options of this project's own build ({@code -Xlint:all}
 * less {@code processing}, whose "no processor claimed" warning names every annotation of a project that any
 * processor leaves unclaimed, and this one claims none, so that others still see them).
 */
final class Compile {

    /** Stand-ins for the retry annotations, in their real packages: the processor recognises them by name only. */
    static final JavaFileObject SPRING_RETRYABLE = JavaFileObjects.forSourceString(
            "org.springframework.resilience.annotation.Retryable", """
            package org.springframework.resilience.annotation;
            import java.lang.annotation.*;
            @Retention(RetentionPolicy.RUNTIME)
            @Target({ElementType.TYPE, ElementType.METHOD})
            public @interface Retryable { long maxRetries() default 3; }
            """);
    static final JavaFileObject SPRING_RETRY_RETRYABLE = JavaFileObjects.forSourceString(
            "org.springframework.retry.annotation.Retryable", """
            package org.springframework.retry.annotation;
            import java.lang.annotation.*;
            @Retention(RetentionPolicy.RUNTIME)
            @Target({ElementType.TYPE, ElementType.METHOD})
            public @interface Retryable { int maxAttempts() default 3; }
            """);
    static final JavaFileObject RESILIENCE4J_RETRY = JavaFileObjects.forSourceString(
            "io.github.resilience4j.retry.annotation.Retry", """
            package io.github.resilience4j.retry.annotation;
            import java.lang.annotation.*;
            @Retention(RetentionPolicy.RUNTIME)
            @Target({ElementType.TYPE, ElementType.METHOD})
            public @interface Retry { String name(); }
            """);

    private Compile() {
    }

    /** A source file of class {@code com.example.<simpleName>}. */
    static JavaFileObject source(String simpleName, String text) {
        return JavaFileObjects.forSourceString("com.example." + simpleName, text);
    }

    /** Compiles {@code sources} and the retry stand-ins with the processor. */
    static Compilation compile(JavaFileObject... sources) {
        return compile(List.of(), sources);
    }

    /** Compiles with extra javac options, such as {@code -Aidempotency.weaving=aspectj}. */
    static Compilation compile(List<String> options, JavaFileObject... sources) {
        List<String> all = new ArrayList<>(List.of("-Xlint:all,-processing", "-parameters"));
        all.addAll(options);
        List<JavaFileObject> files = new ArrayList<>(List.of(sources));
        files.addAll(List.of(SPRING_RETRYABLE, SPRING_RETRY_RETRYABLE, RESILIENCE4J_RETRY));
        return Compiler.javac().withProcessors(new IdempotencyProcessor()).withOptions(all).compile(files);
    }
}
