const toggle = document.getElementById('products-toggle');
toggle.addEventListener('click', () => {
  const open = document.getElementById('products').classList.toggle('hidden') === false;
  toggle.textContent = open ? 'Products ▴' : 'Products ▾';
});
