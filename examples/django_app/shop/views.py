from django.http import HttpRequest, JsonResponse

from .models import Product


def product_list(request: HttpRequest) -> JsonResponse:
    """Products in stock, cheapest first, optionally of one category (``?category=``)."""
    products = Product.objects.filter(stock__gt=0).order_by("price", "name")
    if "category" in request.GET:
        products = products.filter(categories__name=request.GET["category"])
    return JsonResponse(
        {"products": [{"sku": p.sku, "name": p.name, "price": str(p.price)} for p in products]}
    )
