"""Operations: the runs log (`runs`)."""
