const box = document.getElementById('lightbox');
document.querySelectorAll('.thumb').forEach((thumb) => {
  thumb.addEventListener('click', () => {
    document.getElementById('big').src = thumb.getAttribute('src');
    document.getElementById('caption').textContent = thumb.alt;
    box.classList.remove('hidden');
  });
});
document.getElementById('close').addEventListener('click', () => {
  box.classList.add('hidden');
  document.getElementById('seen').textContent = 'Last opened: ' + document.getElementById('caption').textContent;
});
