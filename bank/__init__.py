"""The wetland bank: Minn. Stat. 103G.2242 rules and use cases, built on the ``ledger`` engine."""
