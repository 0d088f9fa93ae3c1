"""The statute's rules as pure functions of their facts: no database, no HTTP, no clock.

Minn. Stat. 103G.2242 and its rules decide what a deposit may credit (``deposit_rules``,
``deposit_eligibility``: Subd. 12's categories and caps), what a replacement requires and which
credits may meet it (``replacement_rules``), when each step of a plan is due (``timeline``, on the
business days of ``calendar``), and which set of those numbers is in force (``ruleset``).  The use
cases in ``bank`` load the facts, call these, and write what they decide.
"""
