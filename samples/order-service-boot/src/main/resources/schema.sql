CREATE TABLE orders (
    id          BIGINT AUTO_INCREMENT PRIMARY KEY,
    approval_no VARCHAR(64)  NOT NULL,
    item        VARCHAR(255) NOT NULL,
    quantity    INT          NOT NULL
);
