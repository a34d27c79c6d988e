CREATE TABLE orders (
    id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_no VARCHAR(64)  NOT NULL,
    item     VARCHAR(255) NOT NULL,
    quantity INT          NOT NULL
);
