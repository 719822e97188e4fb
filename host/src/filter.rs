//! Per-hook filters evaluated before a call (being written).
