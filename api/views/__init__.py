"""HTTP views, one blueprint per area of docs/http.md "Endpoints"."""
