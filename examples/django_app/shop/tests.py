"""The shop's tests, written as for any PostgreSQL database; they run against whichever
database the settings name (``python manage.py test``)."""

from datetime import date
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, ProtectedError, Q, Sum
from django.test import TestCase

from .models import Category, Customer, Order, OrderLine, Product


class ShopTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        cls.tea, cls.tools = Category.objects.bulk_create(
            [Category(name="tea"), Category(name="tools")]
        )
        cls.green = Product.objects.create(
            name="Green tea", sku="T-1", price=Decimal("4.50"), stock=10, added=date(2024, 3, 1)
        )
        cls.black = Product.objects.create(
            name="Black tea", sku="T-2", price=Decimal("3.20"), stock=0, added=date(2024, 1, 15)
        )
        cls.kettle = Product.objects.create(
            name="Kettle", sku="K-1", price=Decimal("29.00"), stock=3, added=date(2023, 11, 2)
        )
        cls.green.categories.add(cls.tea)
        cls.black.categories.add(cls.tea)
        cls.kettle.categories.add(cls.tea, cls.tools)
        cls.ada = Customer.objects.create(email="ada@example.com", name="Ada")
        cls.bob = Customer.objects.create(email="bob@example.com", name="Bob")
        order = Order.objects.create(customer=cls.ada)
        OrderLine.objects.create(
            order=order, product=cls.green, quantity=2, unit_price=Decimal("4.50")
        )
        OrderLine.objects.create(
            order=order, product=cls.kettle, quantity=1, unit_price=Decimal("29.00")
        )
        Order.objects.create(customer=cls.bob, status=Order.Status.PAID)

    def test_lookups_and_ordering(self) -> None:
        in_stock = Product.objects.filter(stock__gt=0).order_by("price")
        self.assertEqual([p.sku for p in in_stock], ["T-1", "K-1"])
        self.assertEqual(Product.objects.get(sku="T-2").name, "Black tea")
        self.assertEqual(
            list(
                Product.objects.filter(added__year=2024)
                .order_by("-added")
                .values_list("sku", flat=True)
            ),
            ["T-1", "T-2"],
        )
        self.assertEqual(Product.objects.filter(Q(price__lt=4) | Q(sku__startswith="K")).count(), 2)

    def test_many_to_many_and_annotations(self) -> None:
        counts = dict(Category.objects.annotate(n=Count("products")).values_list("name", "n"))
        self.assertEqual(counts, {"tea": 3, "tools": 1})
        self.assertEqual(
            sorted(self.tea.products.values_list("sku", flat=True)), ["K-1", "T-1", "T-2"]
        )

    def test_aggregates_across_relations(self) -> None:
        order = Order.objects.get(customer__email="ada@example.com")
        self.assertEqual(order.total(), Decimal("38.00"))
        spent = Customer.objects.annotate(
            n=Count("orders__lines"), units=Sum("orders__lines__quantity")
        ).order_by("name")
        self.assertEqual([(c.name, c.n, c.units) for c in spent], [("Ada", 2, 3), ("Bob", 0, None)])

    def test_prefetch_and_select_related(self) -> None:
        with self.assertNumQueries(2):
            lines = list(
                OrderLine.objects.select_related("product", "order__customer").prefetch_related(
                    "product__categories"
                )
            )
            names = sorted({c.name for line in lines for c in line.product.categories.all()})
        self.assertEqual(names, ["tea", "tools"])
        self.assertEqual({line.order.customer.name for line in lines}, {"Ada"})

    def test_updates_and_deletes(self) -> None:
        Product.objects.filter(categories=self.tea, stock=0).update(stock=5)
        self.black.refresh_from_db()
        self.assertEqual(self.black.stock, 5)
        with self.assertRaises(ProtectedError):
            self.kettle.delete()
        self.bob.delete()  # cascades to the orders
        self.assertFalse(Order.objects.filter(customer__name="Bob").exists())

    def test_constraints_and_transactions(self) -> None:
        order = Order.objects.get(customer=self.ada)
        with self.assertRaises(IntegrityError), transaction.atomic():
            OrderLine.objects.create(order=order, product=self.green, quantity=1, unit_price=1)
        with self.assertRaises(IntegrityError), transaction.atomic():
            Customer.objects.create(email="ada@example.com", name="Another Ada")
        with transaction.atomic():
            Customer.objects.create(email="cy@example.com", name="Cy")
            with self.assertRaises(IntegrityError), transaction.atomic():
                Category.objects.create(name="tea")
        self.assertTrue(Customer.objects.filter(name="Cy").exists())

    def test_get_or_create_and_bulk(self) -> None:
        tea, created = Category.objects.get_or_create(name="tea")
        self.assertFalse(created)
        self.assertEqual(tea.pk, self.tea.pk)
        made = Product.objects.bulk_create(
            [
                Product(name=f"Cup {i}", sku=f"C-{i}", price=Decimal(i), added=date(2024, 5, i))
                for i in range(1, 6)
            ]
        )
        self.assertTrue(all(p.pk for p in made))
        self.assertEqual(
            Product.objects.filter(sku__startswith="C-").aggregate(s=Sum("price"))["s"], Decimal(15)
        )

    def test_view(self) -> None:
        got = self.client.get("/products/", {"category": "tea"}).json()
        self.assertEqual([p["sku"] for p in got["products"]], ["T-1", "K-1"])

    def test_admin(self) -> None:
        User.objects.create_superuser("admin", "admin@example.com", "pw")
        self.client.login(username="admin", password="pw")
        self.assertEqual(self.client.get("/admin/shop/product/").status_code, 200)
        self.assertEqual(
            self.client.get(f"/admin/shop/product/{self.kettle.pk}/change/").status_code, 200
        )
