package dev.idempotency.samples.jpa;

import org.springframework.data.jpa.repository.JpaRepository;

/** The orders, through Spring Data JPA. */
public interface OrderRepository extends JpaRepository<Order, Long> {

    /** How many orders carry this number: at most one (the column is unique). */
    long countByOrderNo(String orderNo);
}
