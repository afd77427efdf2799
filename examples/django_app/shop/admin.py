from django.contrib import admin

from .models import Category, Customer, Order, Product

admin.site.register([Category, Customer, Order, Product])
