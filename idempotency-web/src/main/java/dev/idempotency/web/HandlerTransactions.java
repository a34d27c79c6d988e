package dev.idempotency.web;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.DefaultTransactionAttribute;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.StringUtils;
import org.springframework.web.method.HandlerMethod;

/**
 * The transaction of an {@link IdempotentRequest} handler, which the adapter opens before it claims the key: the
 * handler method's {@code @Transactional} (Spring's or JTA's) when its propagation joins ({@code REQUIRED},
 * {@code NESTED}), on the transaction manager it names, so that the claim, the method's writes and the recorded
 * response commit or roll back together. {@code REQUIRES_NEW} is refused. The call runs in it through
 * {@code dev.idempotency.spring.internal.TransactionalCall}, the one wrapper of every way in.
 */
final class HandlerTransactions {

    private final AnnotationTransactionAttributeSource attributes = new AnnotationTransactionAttributeSource(false);
    private volatile @Nullable BeanFactory beanFactory;

    /** The context the transaction managers are found in. */
    void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /**
     * The transaction the adapter opens for {@code method}: its {@code @Transactional} when that joins, null when it
     * has none or one that does not open a transaction ({@code SUPPORTS}, {@code NOT_SUPPORTED}, ...).
     *
     * @param where the method, as the messages name it
     * @throws IllegalStateException if the method is {@code @Transactional(REQUIRES_NEW)}
     */
    @Nullable TransactionAttribute attribute(HandlerMethod method, String where) {
        TransactionAttribute attribute = attributes.getTransactionAttribute(method.getMethod(), method.getBeanType());
        if (attribute != null
                && attribute.getPropagationBehavior() == TransactionDefinition.PROPAGATION_REQUIRES_NEW) {
            throw new IllegalStateException("@IdempotentRequest on " + where + ": @Transactional(REQUIRES_NEW) would run "
                    + "the method in a transaction the key's claim is not in; use REQUIRED");
        }
        boolean opens = attribute != null
                && (attribute.getPropagationBehavior() == TransactionDefinition.PROPAGATION_REQUIRED
                        || attribute.getPropagationBehavior() == TransactionDefinition.PROPAGATION_NESTED);
        return opens ? attribute : null;
    }

    /**
     * The template that opens {@code attribute}'s transaction ({@code REQUIRED}: it joins one the caller runs) on
     * the transaction manager its qualifier names, or the context's only one.
     *
     * @param where the method, as the messages name it
     * @throws IllegalStateException if there is no context to look in, or the manager is not in it
     */
    TransactionTemplate template(TransactionAttribute attribute, String where) {
        BeanFactory beans = beanFactory;
        if (beans == null) {
            throw new IllegalStateException("@IdempotentRequest on " + where + " is @Transactional, but the adapter was "
                    + "not given a BeanFactory to find the transaction manager in; declare it as a bean");
        }
        String qualifier = attribute.getQualifier();
        PlatformTransactionManager manager;
        try {
            manager = StringUtils.hasText(qualifier)
                    ? BeanFactoryAnnotationUtils.qualifiedBeanOfType(beans, PlatformTransactionManager.class,
                            qualifier)
                    : beans.getBean(PlatformTransactionManager.class);
        } catch (BeansException e) {
            throw new IllegalStateException(where + " is @Transactional, but its transaction manager cannot be found "
                    + "(" + e.getMessage() + "); the claim could not join its transaction", e);
        }
        DefaultTransactionAttribute definition = new DefaultTransactionAttribute(attribute);
        definition.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRED);
        definition.setName(where);
        return new TransactionTemplate(manager, definition);
    }
}
