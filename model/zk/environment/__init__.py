"""What the ZooKeeper controller does not control: brokers and their request handling, the admin's
commands, failures, and the partition leaders that shrink and expand the ISR."""
