from datetime import date

from ledger import Leg, Meta, balances, create_account, transfer


def test_a_transfer_moves_credits_between_two_accounts(db):
    with db.transaction() as s:
        a = create_account(s, code="smoke-a-" + str(id(s)), asset="X", name="a")
        b = create_account(s, code="smoke-b-" + str(id(s)), asset="X", name="b", no_overdraft=True)
        transfer(s, "t", [Leg(a, b, 5)], Meta(f"smoke-{a}-{b}", date(2026, 1, 1)))
        assert balances(s, [b])[b].posted == 5
