------------------------------ MODULE KafkaControllerToy ------------------------------
(*****************************************************************************************)
(* A toy of the ZooKeeper-era Kafka controller, for timing kmc's explorers beside TLC.   *)
(*                                                                                       *)
(* What it keeps of Kafka: the replica and partition state machines (the names of        *)
(* kafka.controller.ReplicaState and PartitionState), brokers that fail and restart, the *)
(* first election of a new partition, OfflinePartitionLeaderElectionStrategy without     *)
(* unclean election, ISR shrink and expand, and the deletion of the one topic that owns  *)
(* every partition. Deliberately not Kafka: no requests or responses, no ZooKeeper, no   *)
(* controller failover, one topic, and the counters crashes/shrinks bound the search.    *)
(*                                                                                       *)
(* tests/toy_models/kafka_controller_toy.py ports it to kmc's model contract with the    *)
(* same names; both must do the same work (bench/tla/README.md lists the counts).        *)
(*****************************************************************************************)
EXTENDS Naturals, FiniteSets, Sequences

CONSTANTS
  Brokers,      \* the broker ids
  Partitions,   \* the topic's partitions
  Assignment,   \* partition -> its replicas, in order (the first is the preferred one)
  MaxCrashes,   \* at most this many broker failures in a behaviour
  MaxShrinks,   \* at most this many ISR shrinks in a behaviour
  MaxEpoch,     \* a partition's leader epoch stops elections here
  None          \* no leader

ReplicaStates == {"NonExistentReplica", "NewReplica", "OnlineReplica", "OfflineReplica",
                  "ReplicaDeletionStarted", "ReplicaDeletionSuccessful",
                  "ReplicaDeletionIneligible"}
PartitionStates == {"NonExistentPartition", "NewPartition", "OnlinePartition",
                    "OfflinePartition"}

VARIABLES
  up,        \* broker -> is it running
  rstate,    \* <<partition, broker>> -> replica state (every pair, assigned or not)
  pstate,    \* partition -> partition state
  leader,    \* partition -> its leader, or None
  isr,       \* partition -> the in-sync replicas
  epoch,     \* partition -> the leader epoch (bumped by ElectLeader only)
  deleting,  \* a topic deletion is in progress
  crashes,   \* broker failures so far
  shrinks    \* ISR shrinks so far

vars == <<up, rstate, pstate, leader, isr, epoch, deleting, crashes, shrinks>>

AssignedTo(p) == {Assignment[p][k] : k \in DOMAIN Assignment[p]}
Position(p, b) == CHOOSE k \in DOMAIN Assignment[p] : Assignment[p][k] = b
LiveReplicas(p) == {b \in AssignedTo(p) : up[b]}
\* The live replica that comes first in p's assignment.
FirstLive(p) == CHOOSE b \in LiveReplicas(p) :
                  \A c \in LiveReplicas(p) : Position(p, b) <= Position(p, c)

TypeOK ==
  /\ up \in [Brokers -> BOOLEAN]
  /\ rstate \in [Partitions \X Brokers -> ReplicaStates]
  /\ pstate \in [Partitions -> PartitionStates]
  /\ leader \in [Partitions -> Brokers \cup {None}]
  /\ isr \in [Partitions -> SUBSET Brokers]
  /\ epoch \in [Partitions -> 0..MaxEpoch]
  /\ deleting \in BOOLEAN

Init ==
  /\ up = [b \in Brokers |-> TRUE]
  /\ rstate = [r \in Partitions \X Brokers |-> "NonExistentReplica"]
  /\ pstate = [p \in Partitions |-> "NonExistentPartition"]
  /\ leader = [p \in Partitions |-> None]
  /\ isr = [p \in Partitions |-> {}]
  /\ epoch = [p \in Partitions |-> 0]
  /\ deleting = FALSE
  /\ crashes = 0
  /\ shrinks = 0

(* ---- the topic: creation and deletion (TopicDeletionManager) ---------------------- *)

\* The topic is created: its partitions become NewPartition, their assigned replicas NewReplica.
CreateTopic ==
  /\ ~deleting
  /\ \A p \in Partitions : pstate[p] = "NonExistentPartition"
  /\ pstate' = [p \in Partitions |-> "NewPartition"]
  /\ rstate' = [r \in Partitions \X Brokers |->
                  IF r[2] \in AssignedTo(r[1]) THEN "NewReplica" ELSE rstate[r]]
  /\ UNCHANGED <<up, leader, isr, epoch, deleting, crashes, shrinks>>

\* Deletion starts once every partition has been elected: the partitions go offline without a
\* leader; an assigned replica starts its deletion if its broker runs, else it is ineligible.
StartDeleteTopic ==
  /\ ~deleting
  /\ \A p \in Partitions : pstate[p] \in {"OnlinePartition", "OfflinePartition"}
  /\ deleting' = TRUE
  /\ pstate' = [p \in Partitions |-> "OfflinePartition"]
  /\ leader' = [p \in Partitions |-> None]
  /\ rstate' = [r \in Partitions \X Brokers |->
                  CASE r[2] \notin AssignedTo(r[1]) -> rstate[r]
                    [] up[r[2]]                     -> "ReplicaDeletionStarted"
                    [] OTHER                        -> "ReplicaDeletionIneligible"]
  /\ UNCHANGED <<up, isr, epoch, crashes, shrinks>>

\* Every assigned replica is deleted: the topic is gone (leaders and epochs are left as they were).
CompleteDeletion ==
  /\ deleting
  /\ \A p \in Partitions : \A b \in AssignedTo(p) : rstate[<<p, b>>] = "ReplicaDeletionSuccessful"
  /\ deleting' = FALSE
  /\ rstate' = [r \in Partitions \X Brokers |-> "NonExistentReplica"]
  /\ pstate' = [p \in Partitions |-> "NonExistentPartition"]
  /\ isr' = [p \in Partitions |-> {}]
  /\ UNCHANGED <<up, leader, epoch, crashes, shrinks>>

\* A running broker answers a StopReplica (delete) with success.
DeletionSucceeded(p, b) ==
  /\ up[b]
  /\ rstate[<<p, b>>] = "ReplicaDeletionStarted"
  /\ rstate' = [rstate EXCEPT ![<<p, b>>] = "ReplicaDeletionSuccessful"]
  /\ UNCHANGED <<up, pstate, leader, isr, epoch, deleting, crashes, shrinks>>

\* resumeDeletions: an ineligible replica whose broker runs again is retried.
RetryIneligible(p, b) ==
  /\ up[b]
  /\ rstate[<<p, b>>] = "ReplicaDeletionIneligible"
  /\ rstate' = [rstate EXCEPT ![<<p, b>>] = "ReplicaDeletionStarted"]
  /\ UNCHANGED <<up, pstate, leader, isr, epoch, deleting, crashes, shrinks>>

(* ---- elections (PartitionStateMachine) ---------------------------------------------- *)

\* NewPartition -> OnlinePartition: the first live replica leads, the live replicas are the ISR.
InitialElection(p) ==
  /\ ~deleting
  /\ pstate[p] = "NewPartition"
  /\ LiveReplicas(p) # {}
  /\ pstate' = [pstate EXCEPT ![p] = "OnlinePartition"]
  /\ leader' = [leader EXCEPT ![p] = FirstLive(p)]
  /\ isr' = [isr EXCEPT ![p] = LiveReplicas(p)]
  /\ rstate' = [r \in Partitions \X Brokers |->
                  IF r[1] = p /\ up[r[2]] /\ r[2] \in AssignedTo(p) THEN "OnlineReplica"
                  ELSE rstate[r]]
  /\ UNCHANGED <<up, epoch, deleting, crashes, shrinks>>

\* OfflinePartition -> OnlinePartition: any live ISR member whose replica is online may lead
\* (one successor per candidate); the epoch is bumped and the dead leave the ISR.
ElectLeader(p) ==
  /\ ~deleting
  /\ pstate[p] = "OfflinePartition"
  /\ epoch[p] < MaxEpoch
  /\ \E b \in isr[p] :
       /\ up[b]
       /\ rstate[<<p, b>>] = "OnlineReplica"
       /\ leader' = [leader EXCEPT ![p] = b]
       /\ pstate' = [pstate EXCEPT ![p] = "OnlinePartition"]
       /\ epoch' = [epoch EXCEPT ![p] = epoch[p] + 1]
       /\ isr' = [isr EXCEPT ![p] = {c \in isr[p] : up[c]}]
  /\ UNCHANGED <<up, rstate, deleting, crashes, shrinks>>

(* ---- brokers (onBrokerFailure, onBrokerStartup) ------------------------------------- *)

\* A running broker fails: its online and new replicas go offline, a deletion in progress
\* on it becomes ineligible, the partitions it led go offline without a leader, and it
\* leaves every ISR it is in, except as the last member.
BrokerFailure(b) ==
  /\ up[b]
  /\ crashes < MaxCrashes
  /\ crashes' = crashes + 1
  /\ up' = [up EXCEPT ![b] = FALSE]
  /\ rstate' = [r \in Partitions \X Brokers |->
                  IF r[2] # b THEN rstate[r]
                  ELSE CASE rstate[r] \in {"NewReplica", "OnlineReplica"} -> "OfflineReplica"
                         [] rstate[r] = "ReplicaDeletionStarted" -> "ReplicaDeletionIneligible"
                         [] OTHER -> rstate[r]]
  /\ pstate' = [p \in Partitions |->
                  IF pstate[p] = "OnlinePartition" /\ leader[p] = b THEN "OfflinePartition"
                  ELSE pstate[p]]
  /\ leader' = [p \in Partitions |-> IF leader[p] = b THEN None ELSE leader[p]]
  /\ isr' = [p \in Partitions |-> IF isr[p] = {b} THEN isr[p] ELSE isr[p] \ {b}]
  /\ UNCHANGED <<epoch, deleting, shrinks>>

\* A failed broker restarts: unless a deletion is in progress, its offline replicas come back online.
BrokerStartup(b) ==
  /\ ~up[b]
  /\ up' = [up EXCEPT ![b] = TRUE]
  /\ rstate' = [r \in Partitions \X Brokers |->
                  IF r[2] = b /\ ~deleting /\ rstate[r] = "OfflineReplica" THEN "OnlineReplica"
                  ELSE rstate[r]]
  /\ UNCHANGED <<pstate, leader, isr, epoch, deleting, crashes, shrinks>>

(* ---- the ISR (the leader's changes, as the controller sees them) ------------------- *)

\* A follower falls out of an online partition's ISR.
IsrShrink(p, b) ==
  /\ shrinks < MaxShrinks
  /\ pstate[p] = "OnlinePartition"
  /\ b \in isr[p] \ {leader[p]}
  /\ shrinks' = shrinks + 1
  /\ isr' = [isr EXCEPT ![p] = isr[p] \ {b}]
  /\ UNCHANGED <<up, rstate, pstate, leader, epoch, deleting, crashes>>

\* A live, online assigned replica catches up and rejoins an online partition's ISR.
IsrExpand(p, b) ==
  /\ pstate[p] = "OnlinePartition"
  /\ b \in AssignedTo(p) \ isr[p]
  /\ up[b]
  /\ rstate[<<p, b>>] = "OnlineReplica"
  /\ isr' = [isr EXCEPT ![p] = isr[p] \cup {b}]
  /\ UNCHANGED <<up, rstate, pstate, leader, epoch, deleting, crashes, shrinks>>

\* The disjuncts in this order: kmc's port lists its actions in the same order, so that a search
\* stopped part-way has seen the same states.
Next ==
  \/ CreateTopic
  \/ StartDeleteTopic
  \/ CompleteDeletion
  \/ \E p \in Partitions : InitialElection(p) \/ ElectLeader(p)
  \/ \E b \in Brokers : BrokerFailure(b) \/ BrokerStartup(b)
  \/ \E p \in Partitions : \E b \in Brokers :
       \/ IsrShrink(p, b)
       \/ IsrExpand(p, b)
       \/ DeletionSucceeded(p, b)
       \/ RetryIneligible(p, b)

Spec == Init /\ [][Next]_vars

(* ---- properties ---------------------------------------------------------------------- *)

OnlineHasLiveLeaderInIsr ==
  \A p \in Partitions :
    pstate[p] = "OnlinePartition" => /\ leader[p] # None
                                    /\ up[leader[p]]
                                    /\ leader[p] \in isr[p]

IsrWithinAssignment == \A p \in Partitions : isr[p] \subseteq AssignedTo(p)

NoOnlineReplicaOnDeadBroker ==
  \A r \in Partitions \X Brokers : rstate[r] = "OnlineReplica" => up[r[2]]

NonAssignedReplicasNonExistent ==
  \A r \in Partitions \X Brokers :
    r[2] \notin AssignedTo(r[1]) => rstate[r] = "NonExistentReplica"

\* Meant to fail (MC_stuck.cfg): with unclean election off, a partition whose ISR members are
\* all dead stays offline.
NeverStuckOffline ==
  \A p \in Partitions :
    (~deleting /\ pstate[p] = "OfflinePartition") => \E b \in isr[p] : up[b]

\* Leader epochs never go down.
EpochMonotonic == [][\A p \in Partitions : epoch[p] <= epoch'[p]]_vars
=========================================================================================
