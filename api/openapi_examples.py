"""Request examples of the main writes, shown in the OpenAPI document beside each body's schema.

Kept apart from ``api.openapi`` (which attaches them) because they are data: one named example
per body a client is most likely to send first, each one the API accepts as it stands.
"""

from __future__ import annotations

from typing import Any

#: "METHOD /path" (without the base) → named examples of its JSON body
REQUEST_EXAMPLES: dict[str, dict[str, dict[str, Any]]] = {
    "POST /tokens": {
        "holder": {
            "summary": "A token for an account holder",
            "value": {"role": "holder", "name": "Prairie Wetlands LLC", "holder_id": "hld_0123"},
        },
    },
    "POST /accounts/{account_id}/deposits": {
        "restoration": {
            "summary": "Credits from a restored wetland, certified under Subd. 12",
            "value": {
                "bank_site_id": "site_5f3a9c2e71d04b86",
                "effective_on": "2026-05-20",
                "banking_plan": {
                    "reference": "BP-2026-014",
                    "approved_on": "2026-05-01",
                    "lgu_id": "lgu_8d2e4f6a0b1c3d5e",
                },
                "wetland_type": "3",
                "completed_on": "2026-04-20",
                "federally_approved": False,
                "designated_for_replacement": True,
                "paid_by_performer": True,
                "paid_back_with_interest": False,
                "actions": [
                    {
                        "category": "replacement_wetland",
                        "area_sqft": 40_000,
                        "credit_sqft": 40_000,
                    }
                ],
            },
        },
    },
    "POST /transfers": {
        "sale": {
            "summary": "A sale of credits of one class",
            "value": {
                "from_account_id": "acct_1a2b3c4d5e6f7a8b",
                "to_account_id": "acct_9f8e7d6c5b4a3f2e",
                "credit_class": "BSA5-T3-U",
                "amount_sqft": 10_000,
                "price_per_sqft_cents": 250,
                "memo": "Sale under agreement 2026-07",
            },
        },
        "lot": {
            "summary": "Credits of one lot",
            "value": {
                "from_account_id": "acct_1a2b3c4d5e6f7a8b",
                "to_account_id": "acct_9f8e7d6c5b4a3f2e",
                "lot_id": "lot_0c1d2e3f4a5b6c7d",
                "amount_sqft": 2_500,
            },
        },
    },
    "POST /accounts/{account_id}/reservations": {
        "for_a_plan": {
            "summary": "Credits held for an approved replacement plan",
            "value": {
                "plan_id": "plan_4e5f6a7b8c9d0e1f",
                "credit_class": "BSA5-T3-U",
                "amount_sqft": 8_000,
                "expires_on": "2027-06-30",
            },
        },
    },
    "POST /plans": {
        "bank_credits": {
            "summary": "A road project replaced 2:1 with bank credits",
            "value": {
                "lgu_id": "lgu_8d2e4f6a0b1c3d5e",
                "applicant": "Lyon County Highway Department",
                "project": "CSAH 7 reconstruction",
                "location": "Section 14, T111N R42W, Lyon County",
                "received_on": "2026-03-02",
                "impact": {
                    "area_sqft": 4_000,
                    "wetland_type": "3",
                    "service_area": 5,
                    "county": "Lyon",
                    "on_agricultural_land": False,
                },
                "replacement_ratio": "2",
                "method": "bank_credits",
                "replacement_outside_service_area": False,
            },
        },
    },
    "POST /plans/{plan_id}/withdrawals": {
        "reserved": {
            "summary": "Withdraw what was reserved for the approved plan",
            "value": {"reservation_ids": ["res_2b3c4d5e6f7a8b9c"]},
        },
    },
    "POST /payments": {
        "processing_fee": {
            "summary": "A plan's processing fee, received by its LGU",
            "value": {
                "kind": "processing_fee",
                "amount_cents": 15_000,
                "payer": "Lyon County Highway Department",
                "received_on": "2026-03-02",
                "plan_id": "plan_4e5f6a7b8c9d0e1f",
            },
        },
    },
}
