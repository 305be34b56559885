enable
disable
