package dev.idempotency.samples.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/**
 * An order. Its number is the business identity, unique in the table: a second order with the same number fails when
 * Hibernate writes it, which (the id coming from a sequence) is at the flush before the commit, after the method
 * returned.
 */
@Entity
@Table(name = "orders")
public class Order {

    @Id
    @GeneratedValue(strategy = GenerationType.SEQUENCE)
    private Long id;

    @Column(name = "order_no", nullable = false, unique = true, length = 64)
    private String orderNo;

    @Column(nullable = false)
    private String item;

    @Column(nullable = false)
    private int quantity;

    /** For JPA. */
    protected Order() {
    }

    /** A new order, not yet saved. */
    public Order(String orderNo, String item, int quantity) {
        this.orderNo = orderNo;
        this.item = item;
        this.quantity = quantity;
    }

    /** The id, once saved. */
    public Long getId() {
        return id;
    }

    /** The order number: unique. */
    public String getOrderNo() {
        return orderNo;
    }

    /** What is ordered. */
    public String getItem() {
        return item;
    }

    /** How many. */
    public int getQuantity() {
        return quantity;
    }
}
