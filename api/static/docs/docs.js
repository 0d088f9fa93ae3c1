// Swagger UI over this service's OpenAPI document (api/docs_pages.py). Loaded as a file, not
// inline, so that the page's Content-Security-Policy needs no 'unsafe-inline'.
"use strict";
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-spec-url"),
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    // no deep links: Swagger UI puts them inside each operation's button, where a link
    // nested in a button is lost to keyboards and screen readers
    deepLinking: false,
    displayOperationId: true,
    defaultModelsExpandDepth: 0,
    // never ask validator.swagger.io (or anyone) about the document
    validatorUrl: null,
    // a token pasted into "Authorize" stays in this tab only
    persistAuthorization: false
  });
});
