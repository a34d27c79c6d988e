CREATE TABLE orders (
    order_id    VARCHAR(64)    PRIMARY KEY,
    approval_no VARCHAR(64)    NOT NULL,
    customer_id VARCHAR(64)    NOT NULL,
    total       DECIMAL(12, 2) NOT NULL,
    created_at  TIMESTAMP(3)   NOT NULL
);
