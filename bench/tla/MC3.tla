---- MODULE MC3 ----
\* MC's cluster with a third partition, p3 on b3 and b1.
EXTENDS KafkaControllerToy, TLC
CONSTANTS b1, b2, b3, p1, p2, p3
ThreePartitions == [p \in {p1, p2, p3} |->
                      CASE p = p1 -> <<b1, b2, b3>>
                        [] p = p2 -> <<b2, b3>>
                        [] p = p3 -> <<b3, b1>>]
====
