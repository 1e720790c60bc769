---- MODULE MC ----
\* Three brokers; p1 on all of them, p2 on b2 and b3.
EXTENDS KafkaControllerToy, TLC
CONSTANTS b1, b2, b3, p1, p2
TwoPartitions == [p \in {p1, p2} |-> IF p = p1 THEN <<b1, b2, b3>> ELSE <<b2, b3>>]
====
