package com.example.orders;

public record OrderReceipt(String orderNo, long orderId) {
}
